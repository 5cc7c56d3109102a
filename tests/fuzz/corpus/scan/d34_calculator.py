print("Simple calculator. Type an expression, e.g. 2 * (3 + 4)")
while True:
    expr = input("> ")
    if expr in ("quit", "exit"):
        break
    print(eval(expr))
