"""Prints the OpenAPI document as JSON, for the Lab extension's type generator.

``jlpm api:types`` (labextension/package.json) runs this and then openapi-typescript, which
writes ``labextension/src/api/openapi.ts``; ``jlpm api:check`` (run in CI) fails when that
file is not what the document gives, so the server and the client cannot drift apart.
"""

from __future__ import annotations

import json
import sys

from terax_jupyter.openapi import openapi_document


def main() -> int:
    json.dump(openapi_document(), sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
