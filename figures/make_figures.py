"""Regenerate the README's pictures: ``python figures/make_figures.py`` (or ``make figures``)."""

import os
import sys

from varfunc.viz.figures import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))))
