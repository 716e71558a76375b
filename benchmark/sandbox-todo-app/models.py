"""Task model: validation and persistence, kept apart from the HTTP layer."""
from dataclasses import dataclass

import db

STATUSES = ("open", "done")
MAX_TITLE_LENGTH = 200


class ValidationError(ValueError):
    """Raised for input the API must refuse with 400; `field` names what was wrong."""

    def __init__(self, field, message):
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass
class Task:
    id: int
    title: str
    status: str
    created_at: str

    def to_dict(self):
        return {"id": self.id, "title": self.title, "status": self.status, "created_at": self.created_at}

    @classmethod
    def from_row(cls, row):
        return cls(row["id"], row["title"], row["status"], row["created_at"])


def validate_title(title):
    if not isinstance(title, str) or not title.strip():
        raise ValidationError("title", "title must be a non-empty string")
    if len(title) > MAX_TITLE_LENGTH:
        raise ValidationError("title", f"title must be at most {MAX_TITLE_LENGTH} characters")
    return title.strip()


def validate_status(status):
    if status not in STATUSES:
        raise ValidationError("status", f"status must be one of {', '.join(STATUSES)}")
    return status


def list_tasks(status=None):
    if status is None:
        rows = db.query("SELECT * FROM tasks ORDER BY id")
    else:
        rows = db.query("SELECT * FROM tasks WHERE status = ? ORDER BY id", (validate_status(status),))
    return [Task.from_row(row) for row in rows]


def get_task(task_id):
    row = db.query("SELECT * FROM tasks WHERE id = ?", (task_id,), one=True)
    return Task.from_row(row) if row else None


def create_task(payload):
    title = validate_title(payload.get("title"))
    task_id = db.execute("INSERT INTO tasks (title) VALUES (?)", (title,))
    return get_task(task_id)


def delete_task(task_id):
    db.execute("DELETE FROM tasks WHERE id = ?", (task_id,))
