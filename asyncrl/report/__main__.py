import sys

from asyncrl.report import main

sys.exit(main())
