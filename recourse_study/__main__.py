import sys

from recourse_study import main

sys.exit(main())
