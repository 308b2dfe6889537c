import pytest

from cluster.api import errors, kinds, objects_pb2
from cluster.api.selectors import FieldSelector, LabelSelector, supported_fields
from cluster.apiserver.selection import Selection
from tests.builders import pod

WEB = {"app": "web", "tier": "frontend", "rank": "7"}
DB = {"app": "db", "env": "prod"}
BARE: dict[str, str] = {}

# (selector, labels, expected)
LABEL_MATCHES = [
    ("", BARE, True),
    ("", WEB, True),
    ("app=web", WEB, True),
    ("app=web", DB, False),
    ("app==web", WEB, True),
    ("app!=web", DB, True),
    ("app!=web", WEB, False),
    ("app!=web", BARE, True),
    ("app in (web,db)", DB, True),
    ("app in (web, db)", WEB, True),
    ("app in (cache)", WEB, False),
    ("app in (web)", BARE, False),
    ("app notin (web)", DB, True),
    ("app notin (web)", WEB, False),
    ("app notin (web)", BARE, True),
    ("tier", WEB, True),
    ("tier", DB, False),
    ("!tier", DB, True),
    ("!tier", WEB, False),
    ("app=web,tier=frontend", WEB, True),
    ("app=web,tier=backend", WEB, False),
    ("app=web, !env", WEB, True),
    ("app in (web,db),env", DB, True),
    ("app in (web,db),env", WEB, False),
    ("rank>5", WEB, True),
    ("rank<5", WEB, False),
    ("rank>5", DB, False),
    ("app>5", WEB, False),
    ("app=", {"app": ""}, True),
    ("app=", WEB, False),
    ("app in ()", {"app": ""}, True),
    ("app in (web,,db)", {"app": ""}, True),
    ("in in (in,notin)", {"in": "notin"}, True),
    ("example.com/role=db", {"example.com/role": "db"}, True),
    ("  app = web  ", WEB, True),
]


@pytest.mark.parametrize(("text", "labels", "expected"), LABEL_MATCHES,
                         ids=[f"{t!r}-{sorted(lab)}" for t, lab, _ in LABEL_MATCHES])
def test_label_selector_matches(text: str, labels: dict[str, str], expected: bool) -> None:
    assert LabelSelector.parse(text).matches(labels) is expected


# (id, selector, words the error must contain)
LABEL_ERRORS = [
    ("missing-value-list", "app in web", "expected: '('"),
    ("unclosed-list", "app in (web", "expected: ',' or ')'"),
    ("two-words", "app web", "found 'web', expected: in, notin"),
    ("trailing-comma", "app=web,", "expected: identifier after ','"),
    ("leading-comma", ",app", "found ',', expected: !, identifier"),
    ("bad-key", "-app=web", 'key: Invalid value: "-app"'),
    ("key-too-long", "a" * 64 + "=x", "must be no more than 63 characters"),
    ("empty-prefix", "/app=web", "prefix part must be non-empty"),
    ("bad-value", "app=we b", "found 'b'"),
    ("value-chars", "app=web!", "expected: ',' or 'end of string'"),
    ("invalid-value", "app=-web", 'values[0]: Invalid value: "-web"'),
    ("gt-not-integer", "rank>high", "the value must be an integer"),
    ("not-with-operator", "!app=web", "found '=', expected: ',' or 'end of string'"),
    ("bang-alone", "!", "expected: identifier"),
]


@pytest.mark.parametrize(("text", "problem"), [(t, p) for _, t, p in LABEL_ERRORS],
                         ids=[i for i, _, _ in LABEL_ERRORS])
def test_label_selector_errors_name_the_selector(text: str, problem: str) -> None:
    with pytest.raises(errors.BadRequest) as raised:
        LabelSelector.parse(text)
    assert f'invalid label selector "{text}"' in raised.value.message
    assert problem in raised.value.message


def test_label_selector_string_form_round_trips() -> None:
    selector = LabelSelector.parse("tier, app in (web,db),!env,rank>3, b!=x")
    assert str(selector) == "app in (db,web),b!=x,!env,rank>3,tier"
    assert LabelSelector.parse(str(selector)) == selector


def test_empty_selectors() -> None:
    assert LabelSelector.parse("").empty
    assert LabelSelector.parse("  ").empty
    assert not LabelSelector.parse("a").empty
    assert LabelSelector.everything().matches(WEB)
    assert not LabelSelector.nothing().matches(WEB)
    assert not LabelSelector.nothing().empty


def _proto(match_labels=None, expressions=()) -> objects_pb2.LabelSelector:
    selector = objects_pb2.LabelSelector(match_labels=match_labels or {})
    for key, operator, values in expressions:
        selector.match_expressions.add(key=key, operator=operator, values=values)
    return selector


PROTO_MATCHES = [
    ("empty-matches-all", _proto(), WEB, True),
    ("match-labels", _proto({"app": "web"}), WEB, True),
    ("match-labels-miss", _proto({"app": "web"}), DB, False),
    ("in", _proto(expressions=[("app", "In", ["db", "web"])]), WEB, True),
    ("notin", _proto(expressions=[("app", "NotIn", ["db"])]), WEB, True),
    ("exists", _proto(expressions=[("env", "Exists", [])]), DB, True),
    ("does-not-exist", _proto(expressions=[("env", "DoesNotExist", [])]), DB, False),
    ("labels-and-expressions", _proto({"app": "db"}, [("env", "In", ["prod"])]), DB, True),
]


@pytest.mark.parametrize(("selector", "labels", "expected"), [c[1:] for c in PROTO_MATCHES],
                         ids=[c[0] for c in PROTO_MATCHES])
def test_from_proto_matches(selector: objects_pb2.LabelSelector, labels: dict, expected: bool) -> None:
    assert LabelSelector.from_proto(selector).matches(labels) is expected


def test_absent_proto_selector_matches_nothing() -> None:
    assert not LabelSelector.from_proto(None).matches(WEB)
    assert LabelSelector.from_proto(_proto()).empty


PROTO_ERRORS = [
    ("unknown-operator", _proto(expressions=[("app", "Gt", ["1"])]),
     'matchExpressions[0].operator: Unsupported value: "Gt"'),
    ("in-without-values", _proto(expressions=[("app", "In", [])]),
     "matchExpressions[0]: values: Required value"),
    ("exists-with-values", _proto(expressions=[("app", "Exists", ["x"])]),
     "matchExpressions[0]: values: Forbidden"),
    ("bad-key", _proto(expressions=[("a b", "Exists", [])]), 'key: Invalid value: "a b"'),
    ("bad-label-value", _proto({"app": "no spaces"}),
     'matchLabels[app]: values[0]: Invalid value: "no spaces"'),
]


@pytest.mark.parametrize(("selector", "problem"), [c[1:] for c in PROTO_ERRORS],
                         ids=[c[0] for c in PROTO_ERRORS])
def test_from_proto_errors_name_the_requirement(selector: objects_pb2.LabelSelector, problem: str) -> None:
    with pytest.raises(errors.Invalid) as raised:
        LabelSelector.from_proto(selector)
    assert problem in raised.value.message


# ------------------------------------------------------------------------------- field selectors

def _pod(node: str = "", phase: str = "Pending", name: str = "web",
         namespace: str = "default") -> objects_pb2.Pod:
    return pod(name, namespace, node_name=node, scheduler_name="default-scheduler", phase=phase)


def _selects(kind: kinds.Kind, text: str, obj: object) -> bool:
    return Selection.parse(kind, field_selector=text).matches(obj)  # type: ignore[arg-type]


FIELD_MATCHES = [
    ("", _pod(), True),
    ("spec.nodeName=n1", _pod("n1"), True),
    ("spec.nodeName==n1", _pod("n1"), True),
    ("spec.nodeName=n1", _pod("n2"), False),
    ("spec.nodeName=", _pod(), True),
    ("spec.nodeName!=", _pod("n1"), True),
    ("spec.nodeName!=", _pod(), False),
    ("status.phase=Running,spec.nodeName=n1", _pod("n1", "Running"), True),
    ("status.phase!=Running,spec.nodeName=n1", _pod("n1", "Running"), False),
    ("metadata.name=web,metadata.namespace=default", _pod(), True),
    ("spec.schedulerName=default-scheduler", _pod(), True),
    ("status.nominatedNodeName=", _pod(), True),
    # v1 clients of long ago name spec.nodeName spec.host; Kubernetes still takes it.
    ("spec.host=n1", _pod("n1"), True),
    ("spec.host=n1", _pod("n2"), False),
]


@pytest.mark.parametrize(("text", "pod", "expected"), FIELD_MATCHES,
                         ids=[c[0] or "empty" for c in FIELD_MATCHES])
def test_field_selector_matches_pods(text: str, pod: objects_pb2.Pod, expected: bool) -> None:
    assert _selects(kinds.POD, text, pod) is expected


def test_field_selector_escapes() -> None:
    selector = FieldSelector.parse(r"metadata.name=a\,b\=c\\d!")
    assert selector.terms[0].value == "a,b=c\\d!"
    assert FieldSelector.parse(str(selector)) == selector
    assert _selects(kinds.POD, r"metadata.name=a\,b\=c\\d!", _pod(name="a,b=c\\d!"))


def test_pod_spec_host_is_spelled_as_node_name() -> None:
    assert FieldSelector.parse("spec.host=n1", kinds.POD).requires_exact("spec.nodeName") == "n1"


# Kubernetes' own messages (apimachinery fields.ParseSelector, the field label conversions), each a
# BadRequest: the request's parameter is malformed.
FIELD_ERRORS = [
    ("no-operator", "spec.nodeName", "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'"),
    ("bad-escape", r"metadata.name=a\x", r"invalid field selector: invalid escape sequence: \x"),
    ("unterminated-escape", "metadata.name=a\\", "invalid field selector: invalid escape sequence: \\"),
    ("unescaped-equals", "metadata.name==a=b", "invalid field selector: unescaped character in value: 61"),
    ("unescaped-comma-is-a-term", "metadata.name=a,b",
     "invalid selector: 'metadata.name=a,b'; can't understand 'b'"),
    ("unsupported-field", "spec.foo=bar", "field label not supported: spec.foo"),
    ("node-field-on-pod", "spec.unschedulable=true", "field label not supported: spec.unschedulable"),
    ("first-sorted-part", "z,a", "invalid selector: 'z,a'; can't understand 'a'"),
]


@pytest.mark.parametrize(("text", "problem"), [c[1:] for c in FIELD_ERRORS], ids=[c[0] for c in FIELD_ERRORS])
def test_field_selector_errors(text: str, problem: str) -> None:
    with pytest.raises(errors.BadRequest) as raised:
        FieldSelector.parse(text, kinds.POD)
    assert raised.value.message == problem
    assert raised.value.http_code == 400


def test_field_selector_without_kind_defers_the_field_check() -> None:
    selector = FieldSelector.parse("spec.foo=bar")
    with pytest.raises(errors.BadRequest, match=r"^field label not supported: spec\.foo$"):
        selector.check_supported(kinds.NODE)


def test_requires_exact() -> None:
    selector = FieldSelector.parse("spec.nodeName=n1,status.phase!=Failed")
    assert selector.requires_exact("spec.nodeName") == "n1"
    assert selector.requires_exact("status.phase") is None
    assert FieldSelector.parse("").empty


# Each kind's selectable fields, as Kubernetes' field label conversions (pkg/apis/core/v1/conversion.go)
# and strategies' ToSelectableFields list them.
SUPPORTED = [
    (kinds.POD, {"metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy",
                 "spec.schedulerName", "spec.serviceAccountName", "status.phase", "status.podIP",
                 "status.nominatedNodeName"}),
    (kinds.NODE, {"metadata.name", "spec.unschedulable"}),
    (kinds.NAMESPACE, {"metadata.name", "status.phase"}),
    (kinds.SERVICE, {"metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"}),
    (kinds.EVENT, {"metadata.name", "metadata.namespace", "involvedObject.kind", "involvedObject.namespace",
                   "involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion",
                   "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
                   "reportingComponent", "source", "type"}),
    (kinds.PRIORITY_CLASS, {"metadata.name", "metadata.namespace"}),
    (kinds.LEASE, {"metadata.name", "metadata.namespace"}),
]


@pytest.mark.parametrize(("kind", "fields"), SUPPORTED, ids=[c[0].name for c in SUPPORTED])
def test_supported_fields_of_each_kind(kind: kinds.Kind, fields: set[str]) -> None:
    assert supported_fields(kind) == fields


def test_node_has_no_namespace_field() -> None:
    with pytest.raises(errors.BadRequest, match=r"^field label not supported: metadata\.namespace$"):
        Selection.parse(kinds.NODE, field_selector="metadata.namespace=default")


def _event() -> objects_pb2.Event:
    event = objects_pb2.Event(reason="Scheduled", type="Normal", reporting_component="default-scheduler")
    ref = event.involved_object
    ref.kind, ref.name, ref.namespace, ref.uid = "Pod", "web", "default", "u1"
    ref.api_version, ref.resource_version, ref.field_path = "v1", "7", "spec.containers{app}"
    event.metadata.name, event.metadata.namespace = "web.1", "default"
    return event


EVENT_MATCHES = [
    ("involvedObject.kind=Pod,involvedObject.name=web,involvedObject.namespace=default", True),
    ("involvedObject.uid=u1,involvedObject.apiVersion=v1,involvedObject.resourceVersion=7", True),
    ("involvedObject.fieldPath=spec.containers{app}", True),
    ("involvedObject.name=other", False),
    ("reason=Scheduled,type=Normal", True),
    ("type!=Normal", False),
    ("reportingComponent=default-scheduler", True),
    # Without a source.component, source is the reporting controller (event strategy's ToSelectableFields).
    ("source=default-scheduler", True),
    ("metadata.name=web.1,metadata.namespace=default", True),
]


@pytest.mark.parametrize(("text", "expected"), EVENT_MATCHES, ids=[c[0] for c in EVENT_MATCHES])
def test_event_field_selectors(text: str, expected: bool) -> None:
    assert _selects(kinds.EVENT, text, _event()) is expected


def test_event_source_prefers_the_source_component() -> None:
    event = _event()
    event.source.component = "kubelet"
    assert _selects(kinds.EVENT, "source=kubelet", event)
    assert not _selects(kinds.EVENT, "source=default-scheduler", event)


NODE_MATCHES = [
    ("spec.unschedulable=true", True, True),
    ("spec.unschedulable=true", False, False),
    ("spec.unschedulable=false", False, True),
    ("spec.unschedulable!=true,metadata.name=n1", False, True),
]


@pytest.mark.parametrize(("text", "cordoned", "expected"), NODE_MATCHES, ids=[c[0] for c in NODE_MATCHES])
def test_node_field_selectors(text: str, cordoned: bool, expected: bool) -> None:
    node = objects_pb2.Node()
    node.metadata.name, node.spec.unschedulable = "n1", cordoned
    assert _selects(kinds.NODE, text, node) is expected


def test_namespace_and_service_field_selectors() -> None:
    namespace = objects_pb2.Namespace()
    namespace.metadata.name, namespace.status.phase = "team", "Active"
    assert _selects(kinds.NAMESPACE, "status.phase=Active,metadata.name=team", namespace)
    service = objects_pb2.Service()
    service.metadata.name, service.spec.type, service.spec.cluster_ip = "web", "ClusterIP", "10.0.0.1"
    assert _selects(kinds.SERVICE, "spec.type=ClusterIP,spec.clusterIP=10.0.0.1", service)
    assert not _selects(kinds.SERVICE, "spec.type=NodePort", service)
