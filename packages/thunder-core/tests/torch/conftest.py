import os
import sys

# Run from the source tree (thunder-core need not be installed); an explicit PYTHONPATH wins.
_src = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "src"))
if _src not in sys.path:
    sys.path.append(_src)
