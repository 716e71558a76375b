import pytest

from app import create_app


@pytest.fixture()
def client(tmp_path):
    app = create_app(str(tmp_path / "test.sqlite3"))
    app.config["TESTING"] = True
    return app.test_client()


def test_create_and_get(client):
    created = client.post("/tasks", json={"title": "write tests"})
    assert created.status_code == 201
    task = created.get_json()
    assert task["status"] == "open"
    assert client.get(f"/tasks/{task['id']}").get_json()["title"] == "write tests"


def test_create_validates_title(client):
    response = client.post("/tasks", json={"title": "  "})
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == "title"


def test_list_filters_by_status(client):
    client.post("/tasks", json={"title": "a"})
    assert [t["title"] for t in client.get("/tasks?status=open").get_json()] == ["a"]
    assert client.get("/tasks?status=bogus").status_code == 400


def test_delete(client):
    task = client.post("/tasks", json={"title": "temp"}).get_json()
    assert client.delete(f"/tasks/{task['id']}").status_code == 204
    assert client.get(f"/tasks/{task['id']}").status_code == 404
