from flask import Flask, jsonify, request

app = Flask(__name__)
todos = []


@app.route("/todos", methods=["GET"])
def list_todos():
    return jsonify(todos)


@app.route("/todos", methods=["POST"])
def add_todo():
    item = request.get_json(force=True)
    todos.append({"id": len(todos) + 1, "title": item["title"], "done": False})
    return jsonify(todos[-1]), 201


if __name__ == "__main__":
    app.run(debug=True, port=5000)
