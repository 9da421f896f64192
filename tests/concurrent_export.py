"""Runs tools/export_savedmodel.py, entering export() only when told.

Used by test_serving_reliability.py to start two exports at one moment:
  python concurrent_export.py GO_FILE NOW [export_savedmodel flags]
touches GO_FILE.ready-<pid> once the model is built, waits for GO_FILE, and
exports as if the time were NOW, so that two exports contend for one version.
"""

import os
import sys
import time
import types

from absl import app

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tools import export_savedmodel  # pylint: disable=g-import-not-at-top,g-bad-import-order


def main():
  go, now = sys.argv.pop(1), float(sys.argv.pop(1))
  export_lib = export_savedmodel.export_lib
  export = export_lib.export
  export_lib.time = types.SimpleNamespace(time=lambda: now)

  def export_when_told(*args, **kwargs):
    with open(f"{go}.ready-{os.getpid()}", "w"):
      pass
    while not os.path.exists(go):
      time.sleep(0.005)
    return export(*args, **kwargs)

  export_lib.export = export_when_told
  app.run(export_savedmodel.main)


if __name__ == "__main__":
  main()
