"""Fixtures of the reliability harness: the profile and the seed of its random choices."""

from __future__ import annotations

import os
import random

import pytest

from .profile import Profile, current_profile

SEED_VARIABLE = "DYNTABLES_RELIABILITY_SEED"


@pytest.fixture
def profile() -> Profile:
    return current_profile()


@pytest.fixture
def seed() -> int:
    """The seed of the driver's choices (kill points, changes); set it to replay a plan.
    Process timing still varies from run to run."""
    text = os.environ.get(SEED_VARIABLE)
    return int(text) if text else random.SystemRandom().randrange(1 << 31)
