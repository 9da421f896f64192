"""`python -m official_spanbert.demo`."""

from official_spanbert.demo.pipeline import console_main

if __name__ == "__main__":
  console_main()
