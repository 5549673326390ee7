"""``python -m terax_jupyter`` is ``jupyter terax``."""

from terax_jupyter.app import main

main()
