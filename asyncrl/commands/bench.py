"""``python -m asyncrl.commands.bench`` (what ``nox -s bench`` runs): the bench itself lives
in ``asyncrl.tools.bench``."""

from asyncrl.tools.bench import main

if __name__ == "__main__":
    main()
