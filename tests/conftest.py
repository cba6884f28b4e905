from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

# Test modules in sub-folders import the shared helpers too; the package under test is the
# installed one (the repository root is deliberately not put on sys.path).
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _helpers import base_episode  # noqa: E402


@pytest.fixture
def episode() -> dict[str, Any]:
    return base_episode()
