import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of


async def test_read_a_file(workspace, terax_api):
    result = await terax_api("fs/file", params={"path": "src/app.py"})
    assert result["content"].startswith("def main")
    assert result["encoding"] == "utf-8"


async def test_secret_is_denied(workspace, terax_api):
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("fs/file", params={"path": ".env"})
    assert caught.value.code == 403
    assert error_of(caught.value)["reason"] == "path_denied"
