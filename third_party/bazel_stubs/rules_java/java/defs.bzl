"""Offline stand-in for @rules_java//java:defs.bzl.

@bazel_tools//tools/jdk (whose toolchains Bazel registers for every build)
loads the Java rules from here. Each macro forwards to the rule built into
Bazel 4.2; this project compiles no Java.
"""

def java_binary(**kwargs):
    native.java_binary(**kwargs)

def java_import(**kwargs):
    native.java_import(**kwargs)

def java_library(**kwargs):
    native.java_library(**kwargs)

def java_proto_library(**kwargs):
    native.java_proto_library(**kwargs)

def java_runtime(**kwargs):
    native.java_runtime(**kwargs)

def java_test(**kwargs):
    native.java_test(**kwargs)

def java_toolchain(**kwargs):
    native.java_toolchain(**kwargs)
