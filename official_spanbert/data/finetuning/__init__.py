"""Fine-tuning data.

  squad.py              SQuAD v1.1/v2.0 JSON -> features and TFRecords.
  squad_predictions.py  start/end logits -> answer texts (SQuAD post-processing).
  classification.py     GLUE / TACRED-style sentence (pair) classification.
  json_file.py          reading JSON input files (shared by the two above).
"""
