"""Remote URLs: web pages of repositories and commits, credentials never shown."""

from __future__ import annotations

import pytest

from terax_jupyter.services.git.remote_url import commit_url, strip_credentials, web_url

OID = "0123456789abcdef0123456789abcdef01234567"

WEB = [
    ("https://github.com/terax/demo.git", "https://github.com/terax/demo"),
    ("https://github.com/terax/demo", "https://github.com/terax/demo"),
    ("https://github.com/terax/demo/", "https://github.com/terax/demo"),
    ("git@github.com:terax/demo.git", "https://github.com/terax/demo"),
    ("ssh://git@github.com/terax/demo.git", "https://github.com/terax/demo"),
    ("ssh://git@ssh.github.com:443/terax/demo.git", "https://github.com/terax/demo"),
    ("git://github.com/terax/demo.git", "https://github.com/terax/demo"),
    ("https://user:ghp_secret@github.com/terax/demo.git", "https://github.com/terax/demo"),
    ("https://ghp_tokenonly@github.com/terax/demo.git", "https://github.com/terax/demo"),
    ("https://gitlab.com/group/sub/project.git", "https://gitlab.com/group/sub/project"),
    ("git@gitlab.com:group/sub/project.git", "https://gitlab.com/group/sub/project"),
    ("ssh://git@gitlab.example.org:2222/team/app.git", "https://gitlab.example.org/team/app"),
    ("https://bitbucket.org/team/repo.git", "https://bitbucket.org/team/repo"),
    ("git@bitbucket.org:team/repo.git", "https://bitbucket.org/team/repo"),
    ("https://git.example.com:8443/team/repo.git", "https://git.example.com:8443/team/repo"),
    ("http://git.example.com/team/repo", "http://git.example.com/team/repo"),
    ("git@ssh.dev.azure.com:v3/org/proj/repo", "https://dev.azure.com/org/proj/_git/repo"),
    ("https://dev.azure.com/org/proj/_git/repo", "https://dev.azure.com/org/proj/_git/repo"),
    ("/srv/git/repo.git", None),
    ("../upstream.git", None),
    ("file:///srv/git/repo.git", None),
    ("C:/repos/thing", None),
    ("ext::ssh -i key host %S repo", None),
    ("", None),
    ("https://github.com/", None),
    ("https://exa mple.com/x", None),
    ("https://github.com/a/../../etc", None),
    ("git@github.com:terax/demo.git\n", "https://github.com/terax/demo"),
]


@pytest.mark.parametrize(("remote", "page"), WEB)
def test_web_url(remote: str, page: str | None) -> None:
    assert web_url(remote) == page


@pytest.mark.parametrize(
    ("page", "commit"),
    [
        ("https://github.com/terax/demo", f"https://github.com/terax/demo/commit/{OID}"),
        ("https://gitlab.com/group/project", f"https://gitlab.com/group/project/-/commit/{OID}"),
        (
            "https://gitlab.example.org/team/app",
            f"https://gitlab.example.org/team/app/-/commit/{OID}",
        ),
        ("https://bitbucket.org/team/repo", f"https://bitbucket.org/team/repo/commits/{OID}"),
        (
            "https://bitbucket.example.com/scm/PROJ/repo",
            f"https://bitbucket.example.com/projects/PROJ/repos/repo/commits/{OID}",
        ),
        ("https://git.example.com/team/repo", f"https://git.example.com/team/repo/commit/{OID}"),
        (
            "https://dev.azure.com/org/proj/_git/repo",
            f"https://dev.azure.com/org/proj/_git/repo/commit/{OID}",
        ),
    ],
)
def test_commit_url(page: str, commit: str) -> None:
    assert commit_url(page, OID) == commit


def test_commit_url_refuses_what_is_not_an_oid() -> None:
    assert commit_url("https://github.com/a/b", "main") is None
    assert commit_url("https://github.com/a/b", "../../x") is None


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:secret@github.com/a/b.git", "https://github.com/a/b.git"),
        ("https://ghp_abc123@github.com/a/b.git", "https://github.com/a/b.git"),
        ("http://u:p@host:8080/a", "http://host:8080/a"),
        ("ssh://user:pass@host/a", "ssh://host/a"),
        ("ssh://git@host/a", "ssh://git@host/a"),
        ("git@github.com:a/b.git", "git@github.com:a/b.git"),
        ("https://github.com/a/b.git", "https://github.com/a/b.git"),
        ("/local/path", "/local/path"),
    ],
)
def test_strip_credentials(url: str, shown: str) -> None:
    assert strip_credentials(url) == shown
