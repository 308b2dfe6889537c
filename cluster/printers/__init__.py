"""How clients print API objects (kubectl's printers and describers): what `podsched get`, `podsched
describe`, the web view, bench and replay reports share. It knows only the API types (cluster.api)."""
