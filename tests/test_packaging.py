"""The package as an index would publish it: a wheel built from this tree, its metadata
read back (name, summary, license, authors, classifiers, URLs, Python versions), and what
``pip show`` prints once it is installed."""

from __future__ import annotations

import email.parser
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--quiet", "--wheel-dir", str(out), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (built,) = out.glob("pi_trio-*.whl")
    return built


def read_metadata(wheel: Path) -> tuple[email.message.Message, list[str]]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (path,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = archive.read(path).decode()
    return email.parser.Parser().parsestr(text), names


def test_the_wheel_carries_the_metadata_of_a_published_package(wheel: Path) -> None:
    metadata, names = read_metadata(wheel)
    assert metadata["Name"] == "pi-trio"
    assert metadata["Summary"] == PROJECT["description"]
    assert metadata["Author"] == "The pi_trio authors"
    assert metadata["Requires-Python"] == ">=3.11"
    # the license: the expression of pyproject.toml, in the field every pip reads
    assert PROJECT["license"] == "MIT"
    assert metadata["License"] == "MIT"
    assert metadata["License-Expression"] is None  # never both (PEP 639)
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    classifiers = metadata.get_all("Classifier")
    assert "License :: OSI Approved :: MIT License" in classifiers
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert "Typing :: Typed" in classifiers
    assert {"Framework :: Trio", "Framework :: AnyIO", "Framework :: AsyncIO"} <= set(classifiers)
    assert metadata.get_all("Project-URL") == [
        "Homepage, https://pypi.org/project/pi-trio/",
        "Original (TypeScript), https://github.com/earendil-works/pi",
    ]
    assert "pi_trio/py.typed" in names
    assert metadata.get_payload().startswith("# pi_trio\n")  # the README is the description


def test_pip_show_names_the_license_and_the_authors(wheel: Path, tmp_path: Path) -> None:
    # a new environment with the pip this Python bundles (23.2 for 3.11.7, which shows the
    # License field only), the wheel installed alone
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / ("Scripts" if sys.platform == "win32" else "bin") / "python"
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run(
        [*pip, "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    shown = subprocess.run(
        [*pip, "show", "pi-trio"], check=True, capture_output=True, text=True, timeout=60
    ).stdout.splitlines()
    assert "License: MIT" in shown
    assert "Author: The pi_trio authors" in shown
    assert "Name: pi-trio" in shown
