import harness as h
if __name__ == "__main__":
    h.main()
