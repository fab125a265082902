import sys

from . import untrusted_folder_off_path

untrusted_folder_off_path()

from .cli import main  # noqa: E402  (after the path is safe)

sys.exit(main())
