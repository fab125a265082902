"""Fixtures of the language server's end-to-end tests (helpers: lsp_support.py).

`client` runs a test against the VS Code and the Neovim client profiles, each
with a fresh server process; `session` wraps it in a `Session`.
"""

from __future__ import annotations

import warnings

import pytest
import pytest_lsp
from lsp_support import CONFIG, PROFILES, Session, init_params
from pytest_lsp import LanguageClient
from pytest_lsp.checks import LspSpecificationWarning


@pytest_lsp.fixture(config=CONFIG, params=PROFILES)
async def client(lsp_client: LanguageClient, request):
    lsp_client.profile = request.param
    result = await lsp_client.initialize_session(init_params(request.param))
    lsp_client.initialize_result = result
    lsp_client.encoding = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(autouse=True)
def _strict_specification():
    """A response that breaks the client's declared capabilities fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", LspSpecificationWarning)
        yield


@pytest.fixture
def session(client: LanguageClient) -> Session:
    return Session(client)
