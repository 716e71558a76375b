"""A small TODO service: JSON API under /tasks and one HTML page."""
import os

from flask import Flask, jsonify, render_template, request

import db
import models


def create_app(database=None):
    app = Flask(__name__)
    app.config["DATABASE"] = database or os.environ.get("TODO_DB", "todo.sqlite3")
    db.init_app(app)
    register_error_handlers(app)

    @app.get("/")
    def index():
        return render_template("index.html", tasks=models.list_tasks())

    @app.get("/tasks")
    def list_tasks():
        status = request.args.get("status")
        return jsonify([task.to_dict() for task in models.list_tasks(status)])

    @app.get("/tasks/<int:task_id>")
    def get_task(task_id):
        task = models.get_task(task_id)
        if task is None:
            return not_found(task_id)
        return jsonify(task.to_dict())

    @app.post("/tasks")
    def create_task():
        payload = request.get_json(silent=True)
        if not isinstance(payload, dict):
            raise models.ValidationError("body", "the body must be a JSON object")
        task = models.create_task(payload)
        return jsonify(task.to_dict()), 201

    @app.delete("/tasks/<int:task_id>")
    def delete_task(task_id):
        if models.get_task(task_id) is None:
            return not_found(task_id)
        models.delete_task(task_id)
        return "", 204

    return app


def not_found(task_id):
    return jsonify({"error": {"field": "id", "message": f"no task {task_id}"}}), 404


def register_error_handlers(app):
    """Every error leaves the API as {"error": {"field", "message"}} with a 4xx or 500 status."""

    @app.errorhandler(models.ValidationError)
    def handle_validation_error(error):
        return jsonify({"error": {"field": error.field, "message": error.message}}), 400

    @app.errorhandler(404)
    def handle_not_found(_error):
        return jsonify({"error": {"field": None, "message": "not found"}}), 404

    @app.errorhandler(Exception)
    def handle_unexpected(error):
        app.logger.exception("unhandled error: %s", error)
        return jsonify({"error": {"field": None, "message": "internal error"}}), 500


if __name__ == "__main__":
    create_app().run(debug=True)
