"""``asyncrl-probe`` and ``python -m asyncrl.commands.probe``: the probe itself lives in
``asyncrl.tools.probe``."""

from asyncrl.tools.probe import main

if __name__ == "__main__":
    main()
