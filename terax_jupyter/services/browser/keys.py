"""Key names and combinations ("Enter", "Shift+Tab", "Control+a") as CDP key events need them."""

from __future__ import annotations

from terax_jupyter.exceptions import InvalidRequest

# name -> (key, code, Windows key code, text)
KEYS: dict[str, tuple[str, str, int, str]] = {
    "Enter": ("Enter", "Enter", 13, "\r"),
    "Tab": ("Tab", "Tab", 9, ""),
    "Escape": ("Escape", "Escape", 27, ""),
    "Backspace": ("Backspace", "Backspace", 8, ""),
    "Delete": ("Delete", "Delete", 46, ""),
    "Insert": ("Insert", "Insert", 45, ""),
    "Space": (" ", "Space", 32, " "),
    "ArrowUp": ("ArrowUp", "ArrowUp", 38, ""),
    "ArrowDown": ("ArrowDown", "ArrowDown", 40, ""),
    "ArrowLeft": ("ArrowLeft", "ArrowLeft", 37, ""),
    "ArrowRight": ("ArrowRight", "ArrowRight", 39, ""),
    "Home": ("Home", "Home", 36, ""),
    "End": ("End", "End", 35, ""),
    "PageUp": ("PageUp", "PageUp", 33, ""),
    "PageDown": ("PageDown", "PageDown", 34, ""),
    **{f"F{n}": (f"F{n}", f"F{n}", 111 + n, "") for n in range(1, 13)},
}
MODIFIERS = {"Alt": 1, "Control": 2, "Ctrl": 2, "Meta": 4, "Shift": 8}


def parse_key(combo: str) -> tuple[int, str, str, int, str]:
    """``"Enter"``, ``"a"``, ``"Shift+Tab"``, ``"Control+a"`` -> (modifiers, key, code,
    Windows key code, text)."""
    parts = combo.split("+") if combo != "+" else ["+"]
    if combo.endswith("++"):
        parts = [*combo[:-2].split("+"), "+"]
    *held, name = parts
    modifiers = 0
    for part in held:
        if part not in MODIFIERS:
            raise InvalidRequest(f"unknown modifier {part!r} in {combo!r}", reason="invalid_key")
        modifiers |= MODIFIERS[part]
    if name in KEYS:
        key, code, key_code, text = KEYS[name]
    elif len(name) == 1 and name.isprintable():
        key, text = name, name
        if name.isascii() and name.isalpha():
            code, key_code = f"Key{name.upper()}", ord(name.upper())
            if modifiers & MODIFIERS["Shift"]:
                key = text = name.upper()
        elif name.isdigit():
            code, key_code = f"Digit{name}", ord(name)
        else:
            code, key_code = "", 0
    else:
        raise InvalidRequest(
            f"unknown key {name!r}; use a single character or one of {', '.join(KEYS)}",
            reason="invalid_key",
        )
    if modifiers & (MODIFIERS["Alt"] | MODIFIERS["Control"] | MODIFIERS["Meta"]):
        text = ""  # a shortcut types nothing
    return modifiers, key, code, key_code, text
