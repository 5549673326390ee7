"""Redaction: credential shapes and known values go; ordinary text stays exactly as it was."""

from __future__ import annotations

import json
import threading

import pytest

from terax_jupyter.security.redact import REDACTED, Redactor, redact

# Shapes assembled at run time, so no credential-looking literal sits in the source.
OPENAI = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1w"
OPENAI_LEGACY = "sk-" + "T3BlbkFJ" + "a1b2c3d4e5f6g7h8i9j0"
ANTHROPIC = "sk-ant-api03-" + "Zx9_Yw8-Vu7Ts6Rq5Po4Nm3Lk2"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GITHUB_FINE = "github_pat_" + "11ABCDEFG0" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9"
GITLAB = "glpat-" + "x1Y2z3A4b5C6d7E8f9G0"
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
SLACK = "xoxb-" + "123456789012-abcdefABCDEF"
GOOGLE = "AIza" + "SyD-1234567890abcdefghijKLMNOPQRSTU"
HUGGING_FACE = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"
JWT = (
    "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


@pytest.mark.parametrize(
    "secret",
    [
        OPENAI,
        OPENAI_LEGACY,
        ANTHROPIC,
        GITHUB,
        GITHUB_FINE,
        GITLAB,
        AWS_KEY_ID,
        SLACK,
        GOOGLE,
        HUGGING_FACE,
        JWT,
    ],
    ids=[
        "openai",
        "openai-legacy",
        "anthropic",
        "github",
        "github-fine-grained",
        "gitlab",
        "aws",
        "slack",
        "google",
        "hugging-face",
        "jwt",
    ],
)
def test_provider_keys_are_redacted_wherever_they_appear(secret: str) -> None:
    for text in (secret, f"key {secret} used", f'{{"value": "{secret}"}}', f"({secret})"):
        out = redact(text)
        assert secret not in out
        assert REDACTED in out


@pytest.mark.parametrize(
    "kind",
    [
        "RSA PRIVATE KEY",
        "PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "EC PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ],
)
def test_private_key_blocks_are_redacted_whole(kind: str) -> None:
    body = "MIIEowIBAAKCAQEA7bq\nZmFrZSBrZXkgbWF0ZXJpYWw=\n"
    text = f"before\n-----BEGIN {kind}-----\n{body}-----END {kind}-----\nafter"
    assert redact(text) == f"before\n{REDACTED}\nafter"


def test_a_private_key_block_cut_short_is_redacted_to_the_end() -> None:
    assert redact("x -----BEGIN PRIVATE KEY-----\nMIIEow...") == f"x {REDACTED}"


def test_public_material_is_left_alone() -> None:
    text = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://bob:hunter22@example.com/x", f"https://bob:{REDACTED}@example.com/x"),
        (
            "git clone https://ada:" + GITHUB + "@github.com/o/r",
            f"git clone https://ada:{REDACTED}@github.com/o/r",
        ),
        ("postgres://app:s3cr3t!@db:5432/x", f"postgres://app:{REDACTED}@db:5432/x"),
        ("https://bob:p@ss@example.com/", f"https://bob:{REDACTED}@example.com/"),
        ("http://localhost:8888/lab", "http://localhost:8888/lab"),
        ("https://example.com:443/a@b", "https://example.com:443/a@b"),
    ],
)
def test_url_passwords_are_redacted_keeping_scheme_and_user(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc.def.ghi", f"Authorization: Bearer {REDACTED}"),
        ("authorization: basic dXNlcjpwYXNzd29yZA==", f"authorization: basic {REDACTED}"),
        ("Proxy-Authorization: Basic dXNlcjpw", f"Proxy-Authorization: Basic {REDACTED}"),
        ("Authorization: token123456789", f"Authorization: {REDACTED}"),
        ('{"Authorization": "Basic dXNlcjpwYXNz"}', f'{{"Authorization": "Basic {REDACTED}"}}'),
        ("{'authorization': 'Bearer abcdefgh'}", f"{{'authorization': 'Bearer {REDACTED}'}}"),
        ("-H 'Bearer abcdefghijklmnopqrstuvwxyz'", f"-H 'Bearer {REDACTED}'"),
    ],
)
def test_authorization_headers_are_redacted(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter22", f"password={REDACTED}"),
        ("PASSWORD = 'hunter22'", f"PASSWORD = '{REDACTED}'"),
        ("OPENAI_API_KEY=abcdef123456", f"OPENAI_API_KEY={REDACTED}"),
        ('"api_key": "abcdef123"', f'"api_key": "{REDACTED}"'),
        ("client_secret: 9f8e7d6c5b", f"client_secret: {REDACTED}"),
        ("access_token=ya29.abcdef", f"access_token={REDACTED}"),
        ("aws_secret_access_key = wJalrXUtnFEMI", f"aws_secret_access_key = {REDACTED}"),
        ("x-api-key: abcdef123456", f"x-api-key: {REDACTED}"),
        ("db.passwd=123456", f"db.passwd={REDACTED}"),
        ("http://h/lab?token=abcdef123456", f"http://h/lab?token={REDACTED}"),
    ],
)
def test_secret_assignments_are_redacted(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "/home/ada/.config/secrets/notes.txt",
        "C:\\Users\\ada\\secrets\\plan.md",
        "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "uuid 123e4567-e89b-12d3-a456-426614174000",
        "def login(password): return check(password)",
        "password = getpass.getpass()",
        'secret_key = os.environ["SECRET_KEY"]',
        "tokenizer = AutoTokenizer.from_pretrained(name)",
        '{"max_tokens": 100000, "input_tokens": 123456}',
        "token = None",
        "if token:\n    use(token)",
        "The password must be 12 characters.",
        "ask-for-permission-before-running-scripts",
        "desk-organizer-with-many-compartments-2024",
        "import numpy as np\nx = np.zeros((3, 3))",
        "https://example.com/path?q=1&page=2",
        "user@example.com wrote: see http://example.com",
        "",
    ],
)
def test_ordinary_text_is_not_mangled(text: str) -> None:
    assert redact(text) == text


def test_known_values_are_redacted_even_when_they_match_no_shape() -> None:
    redactor = Redactor()
    value = "plain-words-no-shape"
    assert redactor.redact(f"got {value} here") == f"got {value} here"
    redactor.add_secret(value)
    assert (
        redactor.redact(f"got {value} here, and {value}.")
        == f"got {REDACTED} here, and {REDACTED}."
    )


def test_known_values_with_regex_characters_are_matched_literally() -> None:
    redactor = Redactor()
    redactor.add_secret("a.b*c(d)")
    assert redactor.redact("x a.b*c(d) y axbbbc(d)") == f"x {REDACTED} y axbbbc(d)"


def test_the_longest_known_value_wins() -> None:
    redactor = Redactor()
    redactor.add_secret("abcdef")
    redactor.add_secret("abcdef-longer")
    assert redactor.redact("abcdef-longer") == REDACTED


def test_short_values_are_not_remembered() -> None:
    redactor = Redactor()
    redactor.add_secret("abc")
    assert redactor.redact("abc abcabc") == "abc abcabc"


def test_a_forgotten_value_is_no_longer_redacted() -> None:
    redactor = Redactor()
    redactor.add_secret("first-value")
    redactor.add_secret("second-value")
    redactor.forget_secret("first-value")
    assert redactor.redact("first-value second-value") == f"first-value {REDACTED}"
    redactor.forget_secret("second-value")
    assert redactor.redact("second-value") == "second-value"
    redactor.forget_secret("never-added")


def test_redactors_do_not_share_known_values() -> None:
    one = Redactor()
    one.add_secret("only-in-one")
    assert Redactor().redact("only-in-one") == "only-in-one"
    assert redact("only-in-one") == "only-in-one"


def test_redact_data_redacts_every_string_and_keeps_the_shape() -> None:
    redactor = Redactor()
    redactor.add_secret('quote"and\\slash')
    data = {
        "user": "ada",
        "count": 3,
        "ratio": 0.5,
        "flag": True,
        "nothing": None,
        "note": f"used {OPENAI}",
        "nested": {"list": [GITHUB, "fine", 'quote"and\\slash'], "tuple": ("x", JWT)},
    }
    out = redactor.redact_data(data)
    assert out == {
        "user": "ada",
        "count": 3,
        "ratio": 0.5,
        "flag": True,
        "nothing": None,
        "note": f"used {REDACTED}",
        "nested": {"list": [REDACTED, "fine", REDACTED], "tuple": ["x", REDACTED]},
    }
    assert data["note"] == f"used {OPENAI}"


def test_redact_data_hides_strings_under_secret_looking_keys() -> None:
    out = Redactor().redact_data(
        {"token": "abc", "api_key": "x", "Password": "short", "max_tokens": 5, "path": "a.txt"}
    )
    assert out == {
        "token": REDACTED,
        "api_key": REDACTED,
        "Password": REDACTED,
        "max_tokens": 5,
        "path": "a.txt",
    }


def test_redact_data_turns_other_objects_into_redacted_text() -> None:
    class Opaque:
        def __str__(self) -> str:
            return f"holder of {ANTHROPIC}"

    assert Redactor().redact_data({"thing": Opaque()}) == {"thing": f"holder of {REDACTED}"}
    assert json.dumps(Redactor().redact_data({"path": Opaque()}))


def test_adding_secrets_while_redacting_from_other_threads_is_safe() -> None:
    redactor = Redactor()
    errors: list[BaseException] = []

    def add() -> None:
        for index in range(100):
            redactor.add_secret(f"secret-value-{index:04d}")

    def read() -> None:
        try:
            for _ in range(100):
                redactor.redact("secret-value-0001 and text")
        except BaseException as error:  # any error at all fails the test below
            errors.append(error)

    threads = [threading.Thread(target=add), *(threading.Thread(target=read) for _ in range(3))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert redactor.redact("secret-value-0099") == REDACTED


def test_keeping_lines_redacts_a_pem_block_and_keeps_the_line_count() -> None:
    block = (
        "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\nabcdEFGH5678\n"
        "-----END RSA PRIVATE KEY-----\nafter token=abcdef123456\n"
    )
    redactor = Redactor()
    redactor.add_secret("known-secret-value")
    kept = redactor.redact(block + "known-secret-value\n", keep_lines=True)
    assert kept.count("\n") == block.count("\n") + 1
    assert "MIIEpAIBAAKCAQEA1234" not in kept
    assert "abcdef123456" not in kept
    assert "known-secret-value" not in kept
    lines = kept.split("\n")
    assert lines[0] == "before"
    assert lines[1] == "[REDACTED]"
    assert lines[5] == "after token=[REDACTED]"
