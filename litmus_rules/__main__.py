import sys

from litmus_rules.cli import main

sys.exit(main())
