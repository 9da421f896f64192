"""official_spanbert.data: input pipelines.

  tokenization.py     the tf.text WordPiece tokenizer and vocab loading, shared
                      by pretraining, fine-tuning, serving and interop.
  tfrecord_writer.py  the one TFRecord writer (atomic: temp name, then rename).
  pretraining/        corpus -> vocab -> packed records -> span masking in the
                      input pipeline (the SpanBERT objective's data).
  finetuning/         SQuAD and GLUE/TACRED features and SQuAD predictions.
"""
