# The VS Code extension's end-to-end test (real VS Code via code-server); see
# vscode-extension/README.md.
.PHONY: e2e e2e-stub

e2e:
	bash vscode-extension/e2e/run-e2e.sh

# The same harness against a throwaway stub server, to check the harness itself.
e2e-stub:
	QUIVER_E2E_SERVER=stub bash vscode-extension/e2e/run-e2e.sh
