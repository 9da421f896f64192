"""The exact (erf) GeLU as a registered Keras activation.

Model Garden's "gelu" is the tanh approximation (Hugging Face's "gelu_new");
the SpanBERT reference, PyTorch and Hugging Face's "gelu" use the exact erf
form. Configs name it `spanbert>gelu_exact` (EXACT_GELU); importing this module
registers it, so that `tf_utils.get_activation` and Keras deserialisation find
it.
"""

import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)
import tensorflow as tf
import tf_keras

EXACT_GELU = "spanbert>gelu_exact"


@tf_keras.utils.register_keras_serializable(package="spanbert",
                                            name="gelu_exact")
def gelu_exact(x):
  """GELU in its exact (erf) form, as PyTorch's and Hugging Face's "gelu"."""
  return tf.nn.gelu(x, approximate=False)
