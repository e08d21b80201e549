# SPDX-License-Identifier: Apache-2.0
# Package.swift's targets as `swift package dump-package` gives them, for the scripts that
# check the module graph and the C headers.
import json, os, subprocess, tempfile


def targets():
    """The manifest's targets, in Package.swift's order. Why a scratch folder of its own:
    dump-package only compiles the manifest, and a build running in .build must not hold it up."""
    with tempfile.TemporaryDirectory() as scratch:
        out = subprocess.run(["swift", "package", "--scratch-path", scratch, "dump-package"],
                             check=True, capture_output=True, text=True).stdout
    return json.loads(out)["targets"]


def folder(t):
    return t.get("path") or os.path.join("Sources", t["name"])


def written_in_c(t):
    """A regular target with no Swift file (a C target)."""
    return not any(f.endswith(".swift") for _, _, files in os.walk(folder(t)) for f in files)
