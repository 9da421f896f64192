"""Shared pytest helpers: where the real data lives."""

import os

import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def data_dir() -> str:
  """The shared real-data folder ($SPANBERT_DATA_DIR or ../shared/data)."""
  return os.environ.get("SPANBERT_DATA_DIR",
                        os.path.join(REPO, os.pardir, "shared", "data"))


def data_path(*parts: str) -> str:
  """Path of a file under the data folder; skips the test when missing."""
  path = os.path.join(data_dir(), *parts)
  if not os.path.exists(path):
    pytest.skip(f"real data {path} is absent (set SPANBERT_DATA_DIR or place "
                "the shared data at ../shared/data)")
  return path


@pytest.fixture(scope="session")
def cased_vocab() -> str:
  return data_path("vocab", "bert-base-cased-vocab.txt")


def first_lines(path: str, max_bytes: int, out_path: str) -> str:
  """Copies whole documents of a corpus file up to about max_bytes."""
  with open(path, "rb") as f, open(out_path, "wb") as out:
    size = 0
    for line in f:
      out.write(line)
      size += len(line)
      if size >= max_bytes and not line.strip():
        break
  return out_path
