"""Pretraining data, in the order it flows.

  corpus.py               reads the text corpus (one sentence a line, blank
                          line between documents).
  vocab_builder.py        learns a WordPiece vocab from the corpus.
  span_tagging.py         named-entity / noun-phrase span tags (optional).
  packing.py              packs sentences into fixed-length blocks.
  pretraining_records.py  corpus -> unmasked TFRecord shards + metadata.
  masking.py              span masking (geometric / word / entity / phrase).
  pretrain_dataloader.py  the data config and the Model Garden data loader
                          that masks records on the fly.
  dummy_inputs.py         synthetic masked batches for `input_path: dummy`.
"""
