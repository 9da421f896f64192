"""Offline stand-in for @rules_cc//cc:defs.bzl.

Bazel 4.2's own @bazel_tools BUILD files (tools/cpp, tools/jdk, ...) load the
C++ rules from here, so the repository must exist even though this project
builds no C++. Each macro forwards to the rule built into Bazel 4.2, which is
all the real rules_cc of that era did too.
"""

def cc_binary(**kwargs):
    native.cc_binary(**kwargs)

def cc_import(**kwargs):
    native.cc_import(**kwargs)

def cc_library(**kwargs):
    native.cc_library(**kwargs)

def cc_proto_library(**kwargs):
    native.cc_proto_library(**kwargs)

def cc_test(**kwargs):
    native.cc_test(**kwargs)

def cc_toolchain(**kwargs):
    native.cc_toolchain(**kwargs)

def cc_toolchain_suite(**kwargs):
    native.cc_toolchain_suite(**kwargs)

def objc_library(**kwargs):
    native.objc_library(**kwargs)
