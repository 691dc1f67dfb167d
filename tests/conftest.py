import pathlib
import sys

# The example models live in examples/ (the demo uses them too).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
