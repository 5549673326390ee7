"""The deny-list: each built-in rule, each spelling of it, admin additions, the bulk pre-filter."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wcmatch import fnmatch, glob

from terax_jupyter.security.denylist import (
    SEARCH_EXCLUDE_GLOBS,
    SECRET_DIRECTORIES,
    SYSTEM_PREFIXES,
    WRITE_ONLY_DENIED_PREFIXES,
    DenyList,
)

if TYPE_CHECKING:
    from pathlib import Path

DENY = DenyList()

# Each built-in file-name rule, with names it must catch.
SECRET_NAMES: dict[str, list[str]] = {
    ".env*": [".env", ".env.local", ".env.production", ".envrc"],
    "*.pem": ["server.pem", "chain.PEM"],
    "*.key": ["private.key", "tls.Key"],
    "*.p12": ["cert.p12"],
    "*.pfx": ["cert.pfx"],
    "*.asc": ["signing.asc"],
    "*.gpg": ["vault.gpg"],
    "*.keystore": ["release.keystore"],
    "*.jks": ["trust.jks"],
    "*.kdbx": ["passwords.kdbx"],
    "id_rsa*, id_dsa*, id_ecdsa*, id_ed25519*": [
        "id_rsa",
        "id_rsa.pub",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_ed25519_sk",
    ],
    "known_hosts": ["known_hosts", "known_hosts.old"],
    "authorized_keys": ["authorized_keys", "authorized_keys2"],
    "htpasswd": ["htpasswd", ".htpasswd"],
    ".netrc": [".netrc"],
    "_netrc": ["_netrc"],
    "credentials": ["credentials", "credentials.json"],
    ".git-credentials": [".git-credentials"],
    ".pgpass": [".pgpass"],
    ".npmrc": [".npmrc"],
    ".pypirc": [".pypirc"],
    "secret(s).(json|yaml|yml|toml|env)": [
        "secret.json",
        "secrets.yaml",
        "secrets.yml",
        "secret.toml",
        "secrets.env",
    ],
    "service[-_]account*.json": ["service-account.json", "service_account-prod.json"],
    "jupyter_cookie_secret": ["jupyter_cookie_secret"],
    "jpserver-*.json": ["jpserver-4242.json", "jpserver-4242-open.html"],
    "kernel-*.json": ["kernel-1a2b.json"],
}
NAME_CASES = [(rule, name) for rule, names in SECRET_NAMES.items() for name in names]

# Names that share letters with a rule but are not secrets.
ORDINARY_NAMES = [
    "my.env",
    "environment.py",
    "x.pem.txt",
    "keyboard.py",
    "keys.md",
    "credentials.py",
    "my_secrets.json",
    "secrets.txt",
    "kernel.json",
    "netrc.md",
    "id.py",
    "known.txt",
    ".gitignore",
    ".gitattributes",
    ".gitmodules",
    ".dockerignore",
    "README.md",
]


def denied(path: str, *, write: bool = False, deny: DenyList = DENY) -> bool:
    return deny.check(path, write=write) is not None


# -- secret file names ----------------------------------------------------------------------------


@pytest.mark.parametrize(("rule", "name"), NAME_CASES)
@pytest.mark.parametrize("write", [False, True])
def test_every_secret_name_is_denied_anywhere(rule: str, name: str, write: bool) -> None:
    for path in (name, f"src/{name}", f"/home/u/project/{name}", f"C:\\work\\{name}"):
        denial = DENY.check(path, write=write)
        assert denial is not None, path
        assert denial.rule == rule


@pytest.mark.parametrize(("rule", "name"), NAME_CASES)
def test_secret_names_are_denied_in_any_case(rule: str, name: str) -> None:
    assert DENY.check(name.upper(), write=False) is not None
    assert DENY.check(name.swapcase(), write=False) is not None


@pytest.mark.parametrize("name", ORDINARY_NAMES)
def test_ordinary_names_are_not_denied(name: str) -> None:
    for path in (name, f"/home/u/project/{name}"):
        assert not denied(path)
        assert not denied(path, write=True)


def test_a_secret_name_only_matters_as_the_last_segment() -> None:
    assert not denied("/projects/server.pem.d/readme.md")
    assert not denied("/projects/credentials.json.bak")
    assert denied("/projects/.env/")


# -- secret directories ---------------------------------------------------------------------------


@pytest.mark.parametrize("directory", SECRET_DIRECTORIES)
@pytest.mark.parametrize("write", [False, True])
def test_every_secret_directory_is_denied_as_a_whole_segment_anywhere(
    directory: str, write: bool
) -> None:
    for path in (directory, f"{directory}/"):
        assert denied(path, write=write), path
    for path in (
        f"{directory}/anything.txt",
        f"/home/u/{directory}/deep/file",
        f"a/b/{directory}/c",
        f"/home/u/{directory.upper()}/x",
    ):
        denial = DENY.check(path, write=write)
        assert denial is not None, path
        assert denial.rule == directory.lower() + "/"


@pytest.mark.parametrize("directory", SECRET_DIRECTORIES)
def test_a_secret_directory_is_not_matched_as_a_substring(directory: str) -> None:
    head, _, last = directory.rpartition("/")
    prefix = f"{head}/" if head else ""
    for lookalike in (f"{prefix}{last}x", f"{prefix}x{last}", f"{prefix}{last}-old"):
        assert not denied(f"/projects/{lookalike}/notes.md"), lookalike


@pytest.mark.parametrize(
    "path",
    [
        "/projects/.github/projectsflows/ci.yml",
        "/projects/.gitignore",
        "/projects/.gitlab-ci.yml",
        "/projects/my.env",
        "/projects/.sshd/config",
        "/projects/ssh/config",
        "/projects/aws/notes.md",
        "/projects/.config/ghost/x",
        "/projects/.config/x/gh/y",
        "/projects/gh/.config/y",
        "/projects/.local/share/applications/x.desktop",
    ],
)
def test_near_misses_are_not_denied(path: str) -> None:
    assert not denied(path)
    assert not denied(path, write=True)


def test_git_internals_are_denied_but_not_the_work_tree() -> None:
    assert denied("/repo/.git/config")
    assert denied("/repo/.git/hooks/pre-commit", write=True)
    assert not denied("/repo/src/git.py")


# -- system prefixes ------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", SYSTEM_PREFIXES)
@pytest.mark.parametrize("write", [False, True])
def test_system_prefixes_are_denied_for_read_and_write(prefix: str, write: bool) -> None:
    for path in (prefix, f"{prefix}/", f"{prefix}/x/y", prefix.upper() + "/x", f"C:{prefix}/x"):
        denial = DENY.check(path, write=write)
        assert denial is not None, path
        assert denial.rule == prefix + "/"


@pytest.mark.parametrize("prefix", SYSTEM_PREFIXES)
def test_system_prefixes_need_a_segment_boundary_and_an_absolute_path(prefix: str) -> None:
    assert not denied(f"{prefix}x/y")
    assert not denied(f"{prefix}.d/y")
    assert not denied(prefix.lstrip("/") + "/x")  # relative: inside the workspace


@pytest.mark.parametrize("prefix", WRITE_ONLY_DENIED_PREFIXES)
def test_write_only_prefixes_deny_writes_and_allow_reads(prefix: str) -> None:
    path = f"{prefix}/some/file"
    assert not denied(path)
    denial = DENY.check(path, write=True)
    assert denial is not None
    assert denial.rule == prefix + "/"
    assert denied(prefix.upper() + "/x", write=True)
    assert not denied(f"{prefix}x/file", write=True)


@pytest.mark.parametrize(
    "path",
    [
        "C:\\Windows\\System32\\config\\x",
        "c:/program files/app/x.dll",
        "C:\\Program Files (x86)\\App\\x",
        "\\\\?\\C:\\Windows\\x",
    ],
)
def test_windows_system_folders_are_write_only(path: str) -> None:
    assert not denied(path)
    assert denied(path, write=True)


def test_dot_dot_after_a_system_prefix_is_still_the_prefix_literally() -> None:
    # The literal check does not resolve "..": it judges the path as asked.
    assert denied("/etc/../tmp/x")
    assert denied("/projects/.ssh/../notes.md")


# -- spellings: case, Windows, look-alikes --------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        (".ENV", ".env*"),
        ("ID_RSA", "id_rsa*, id_dsa*, id_ecdsa*, id_ed25519*"),
        ("/x/.SSH/config", ".ssh/"),
        ("/x/.AwS/credentials", "credentials"),
        (".env::$DATA", ".env*"),
        (".env:x", ".env*"),
        ("id_rsa:Zone.Identifier", "id_rsa*, id_dsa*, id_ecdsa*, id_ed25519*"),
        (".env.", ".env*"),
        (".env ", ".env*"),
        (".env. .", ".env*"),
        ("server.pem.", "*.pem"),
        ("server.pem ", "*.pem"),
        (".ssh./x", ".ssh/"),
        (".ssh /x", ".ssh/"),
        (".ssh::$INDEX_ALLOCATION/x", ".ssh/"),
        ("C:\\Users\\a\\.aws\\credentials", "credentials"),
        ("C:\\Users\\a\\.aws\\config", ".aws/"),
        ("\\\\?\\C:\\x\\.ssh\\id", ".ssh/"),
        ("\\\\.\\C:\\x\\.gnupg\\k", ".gnupg/"),
        ("/projects//.config//gh/hosts.yml", ".config/gh/"),
        ("/projects/./.config/./gcloud/x", ".config/gcloud/"),
        ("//etc/passwd", "/etc/"),
        ("\\??\\C:\\etc\\passwd", "/etc/"),
        ("\uff0e\uff45\uff4e\uff56", ".env*"),  # fullwidth .env
        ("src/\uff0e\uff53\uff53\uff48/x", ".ssh/"),  # fullwidth .ssh
        (".\u0435nv", ".env*"),  # Cyrillic ie
        (".\u0455sh/x", ".ssh/"),  # Cyrillic dze
        ("\u0456d_rsa", "id_rsa*, id_dsa*, id_ecdsa*, id_ed25519*"),  # Cyrillic i
        ("\u0406D_RSA", "id_rsa*, id_dsa*, id_ecdsa*, id_ed25519*"),  # Cyrillic capital I
        ("/\u0395TC/passwd", "/etc/"),  # Greek capital epsilon
        ("/x/.\u0391WS/x", ".aws/"),  # Greek capital alpha
        ("/x/.\u0261nupg/x", ".gnupg/"),  # Latin script g
        (".e\u0301nv", ".env*"),  # combining accent
    ],
)
def test_every_spelling_of_a_rule_is_denied(path: str, rule: str) -> None:
    for write in (False, True):
        denial = DENY.check(path, write=write)
        assert denial is not None, path
        assert denial.rule == rule


def test_a_name_holding_a_newline_still_matches_its_rule() -> None:
    # Names on disk may hold any byte but "/" and NUL; a listing must not slip past the rules.
    assert denied("/projects/.env\nbackup")
    assert denied("/projects/id_rsa\n")


def test_the_denial_explains_itself() -> None:
    denial = DENY.check("/projects/.ENV.local", write=False)
    assert denial is not None
    assert denial.explain() == "'.env.local' matches the protected rule '.env*'"


# -- admin additions ------------------------------------------------------------------------------


def test_admin_patterns_extend_the_list() -> None:
    deny = DenyList(extra_patterns=["*.sqlite", "private/", "dumps/*.sql"])
    assert denied("/projects/app.sqlite", deny=deny)
    assert denied("/projects/APP.SQLITE", deny=deny)
    assert denied("/projects/x/private/notes.md", deny=deny)
    assert denied("/projects/dumps/prod.sql", deny=deny)
    assert denied("dumps/prod.sql", deny=deny)
    assert not denied("/projects/dumps/old/prod.sql", deny=deny)
    assert not denied("/projects/privateer/notes.md", deny=deny)
    assert not denied("/projects/app.py", deny=deny)
    assert deny.check("/projects/app.sqlite", write=False).rule == "admin deny pattern"  # type: ignore[union-attr]


def test_a_leading_slash_anchors_an_admin_pattern_to_the_filesystem_root() -> None:
    deny = DenyList(extra_patterns=["/srv/data/*.csv"])
    assert denied("/srv/data/a.csv", deny=deny)
    assert not denied("/projects/srv/data/a.csv", deny=deny)


def test_admin_patterns_cannot_shrink_the_built_in_list() -> None:
    deny = DenyList(extra_patterns=["!.env", "!*.pem", "!.ssh/", "!**/.ssh/**", "!/etc"])
    for path in ("/projects/.env", "/projects/server.pem", "/home/u/.ssh/id", "/etc/passwd"):
        assert denied(path, deny=deny), path


def test_blank_admin_patterns_are_ignored() -> None:
    deny = DenyList(extra_patterns=["", "   "])
    assert deny.extra_patterns == []
    assert not denied("/projects/anything.txt", deny=deny)


def test_admin_prefixes_extend_read_and_write_denial() -> None:
    deny = DenyList(extra_prefixes=["/srv/vault/"], extra_write_prefixes=["D:\\Readonly"])
    assert denied("/srv/vault/x", deny=deny)
    assert denied("/SRV/Vault/x", deny=deny)
    assert denied("/srv/vault", deny=deny)
    assert not denied("/srv/vaults/x", deny=deny)
    assert not denied("/readonly/x", deny=deny)
    assert denied("/readonly/x", write=True, deny=deny)
    assert denied("/etc/x", deny=deny)  # the built-ins stay


def test_admin_prefixes_also_match_where_their_links_lead(tmp_path: Path) -> None:
    real = tmp_path / "real-state"
    real.mkdir()
    link = tmp_path / "state-link"
    link.symlink_to(real)
    deny = DenyList(extra_prefixes=[str(link)])
    # The guard's second check sees canonical paths: the link's target must be denied too.
    assert denied(os.path.join(str(link), "audit.jsonl"), deny=deny)
    assert denied(os.path.join(str(real), "audit.jsonl"), deny=deny)


# -- search globs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("rule", "name"), NAME_CASES)
def test_search_globs_exclude_every_secret_name(rule: str, name: str) -> None:
    flags = fnmatch.BRACE | fnmatch.IGNORECASE | fnmatch.DOTMATCH
    assert any(fnmatch.fnmatch(name, g, flags=flags) for g in SEARCH_EXCLUDE_GLOBS), rule


@pytest.mark.parametrize("directory", SECRET_DIRECTORIES)
def test_search_globs_exclude_every_secret_directory(directory: str) -> None:
    flags = glob.GLOBSTAR | glob.DOTGLOB | glob.IGNORECASE | glob.BRACE
    path = f"project/{directory}/file.txt"
    assert any(glob.globmatch(path, g, flags=flags) for g in SEARCH_EXCLUDE_GLOBS), directory


def test_search_globs_leave_ordinary_files_alone() -> None:
    flags = fnmatch.BRACE | fnmatch.IGNORECASE | fnmatch.DOTMATCH
    for name in ORDINARY_NAMES:
        assert not any(fnmatch.fnmatch(name, g, flags=flags) for g in SEARCH_EXCLUDE_GLOBS), name


# -- denied_among: the bulk form must agree with check --------------------------------------------


def expected_denials(deny: DenyList, paths: list[str], *, write: bool) -> set[int]:
    return {i for i, p in enumerate(paths) if deny.check(p, write=write) is not None}


VOCABULARY = [
    *(name for _, name in NAME_CASES),
    *ORDINARY_NAMES,
    *(part for d in SECRET_DIRECTORIES for part in d.split("/")),
    *(p.strip("/") for p in (*SYSTEM_PREFIXES, *WRITE_ONLY_DENIED_PREFIXES)),
    *("src", "main.py", "docs", "home", "u", "work", ".github", ".config", ".local"),
    *(
        ".ENV",
        "Id_Rsa",
        ".SSH",
        "\uff25\uff34\uff23",  # fullwidth ETC
        ".\u0435nv",
        "\u0455",
        "\u212a",
        "C:",
        "c:",
        "::$DATA",
    ),
    *(".", "..", "", " ", "?", "??", "unc", "x\ny", ".env.", "a.pem "),
]
SEPARATORS = ["/", "/", "/", "\\", "//", "/./", ":", ".", " ", ""]
LEADS = ["/", "/", "/", "", "\\", "C:\\", "//?/", "\\??\\", "./", "~/"]

segment = st.one_of(st.sampled_from(VOCABULARY), st.text(alphabet="abcEeT.-_ /\\:", max_size=6))
random_path = st.builds(
    lambda lead, parts: lead + "".join(p + s for p, s in parts),
    st.sampled_from(LEADS),
    st.lists(st.tuples(segment, st.sampled_from(SEPARATORS)), max_size=7),
)
BULK = settings(
    max_examples=250, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@BULK
@given(paths=st.lists(random_path, max_size=10), write=st.booleans())
def test_denied_among_equals_check_for_random_paths(paths: list[str], write: bool) -> None:
    assert DENY.denied_among(paths, write=write) == expected_denials(DENY, paths, write=write)


@BULK
@given(
    paths=st.lists(
        st.builds(lambda parts: "/" + "/".join(parts), st.lists(segment, min_size=1, max_size=6)),
        max_size=10,
    ),
    write=st.booleans(),
)
def test_denied_among_equals_check_for_plain_absolute_paths(paths: list[str], write: bool) -> None:
    # The common shape (a listing under a root): the pre-filter alone decides most of these.
    assert DENY.denied_among(paths, write=write) == expected_denials(DENY, paths, write=write)


@pytest.mark.parametrize(
    "paths",
    [
        ["/etc", "/etc"],
        ["/a/b.pem", "/etc"],
        ["/a/b.key", "/c/d.pem", "/proc"],
        ["/ok", "/etc", "/etc", "/ok"],
    ],
)
def test_denied_among_finds_adjacent_denied_paths(paths: list[str]) -> None:
    # Each path's closing line break is also the next one's opening: both must match.
    assert DENY.denied_among(paths) == expected_denials(DENY, paths, write=False)
    assert DENY.denied_among(paths) == {i for i, p in enumerate(paths) if p != "/ok"}


@pytest.mark.parametrize(
    "path",
    [
        ".env/",
        "/a/x.pem/",
        "/a//.config//gh/x",
        "//etc/passwd",
        "/??/etc/passwd",
        "a\\.env",
        "src/.env",
        "/projects/.env\nbackup",
        "/projects/\u212aey.key",
        "/projects/ok\n/etc/passwd",
    ],
)
def test_denied_among_agrees_on_the_forms_that_once_slipped_past(path: str) -> None:
    for write in (False, True):
        paths = ["/projects/ok.txt", path, "/projects/README.md"]
        assert DENY.denied_among(paths, write=write) == expected_denials(DENY, paths, write=write)


def test_denied_among_with_admin_rules_agrees_with_check(tmp_path: Path) -> None:
    deny = DenyList(
        extra_patterns=["*.sqlite"], extra_prefixes=["/srv/vault"], extra_write_prefixes=["/opt/ro"]
    )
    paths = ["/w/a.sqlite", "/srv/vault/x", "/opt/ro/x", "/w/.env", "/w/ok.py", "/srv/vaulty"]
    assert deny.denied_among(paths) == {0, 1, 3}
    assert deny.denied_among(paths, write=True) == {0, 1, 2, 3}
    prefix_only = DenyList(extra_prefixes=["/srv/vault"])
    assert prefix_only.denied_among(paths) == {1, 3}


def test_denied_among_of_nothing_is_nothing() -> None:
    assert DENY.denied_among([]) == set()
    assert DENY.denied_among(["/projects/a.py", "/projects/b.py"]) == set()


# -- denied_among with a base folder --------------------------------------------------------

_BASES = [
    "/home/u/project",
    "/home/u/.config",
    "/home/u/appdata/roaming",
    "/home/u/appdata",
    "/home/u/.local/share",
    "/",
    "/srv/",
]
_BASE_SAMPLES = [
    "src/app.py",
    ".env",
    "a/.ssh/id",
    "etc/passwd",
    "gh/hosts.yml",
    "microsoft/credentials/x",
    "roaming/microsoft/protect/k",
    "keyrings/login.keyring",
    "café/.env",
    "docs/.github/ci.yml",
    "x.pem",
    "notes.pem.txt",
    "kernel-1.json",
]


@pytest.mark.parametrize(
    ("base", "relative", "denied"),
    [
        ("/home/u/project", "src/app.py", False),
        ("/home/u/project", ".env", True),
        ("/home/u/project", "a/.ssh/id", True),
        ("/home/u/project", "etc/passwd", False),
        ("/home/u/.config", "gh/hosts.yml", True),
        ("/home/u/.config", "other/x.txt", False),
        ("/home/u/appdata/roaming", "microsoft/credentials/x", True),
        ("/", "etc/passwd", True),
        ("/home/u/project", "café/.env", True),
    ],
)
def test_denied_among_with_a_base_agrees_with_check(base, relative, denied):
    deny = DenyList()
    absolute = f"{base.rstrip('/')}/{relative}"
    assert (deny.check(absolute, write=False) is not None) is denied
    assert deny.denied_among([relative, "plain.txt"], base=base) == ({0} if denied else set())


def test_denied_among_with_a_denied_base_denies_everything():
    deny = DenyList()
    assert deny.denied_among(["notes.txt", "a/b.py"], base="/home/u/.ssh") == {0, 1}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_BASE_SAMPLES), min_size=1, max_size=30), st.sampled_from(_BASES))
def test_denied_among_with_a_base_equals_check(relatives, base):
    deny = DenyList()
    expected = {
        i
        for i, rel in enumerate(relatives)
        if deny.check(f"{base.rstrip('/')}/{rel}", write=False) is not None
    }
    assert deny.denied_among(relatives, base=base) == expected
