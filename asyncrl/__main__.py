from asyncrl.commands.cli import main

main()
