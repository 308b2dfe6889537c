import pytest

from cluster.api import errors, kinds, objects_pb2
from cluster.api.selectors import FieldSelector, LabelSelector, object_fields, supported_fields
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
    with pytest.raises(errors.Invalid) as raised:
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
]


@pytest.mark.parametrize(("text", "pod", "expected"), FIELD_MATCHES,
                         ids=[c[0] or "empty" for c in FIELD_MATCHES])
def test_field_selector_matches_pods(text: str, pod: objects_pb2.Pod, expected: bool) -> None:
    selector = FieldSelector.parse(text, kinds.POD)
    assert selector.matches(object_fields(kinds.POD, pod)) is expected


def test_field_selector_escapes() -> None:
    selector = FieldSelector.parse(r"metadata.name=a\,b\=c\\d!")
    assert selector.terms[0].value == "a,b=c\\d!"
    assert selector.matches({"metadata.name": "a,b=c\\d!"})
    assert FieldSelector.parse(str(selector)) == selector


FIELD_ERRORS = [
    ("no-operator", "spec.nodeName", "can't understand 'spec.nodeName'"),
    ("bad-escape", r"metadata.name=a\x", "invalid escape sequence"),
    ("unterminated-escape", "metadata.name=a\\", "unterminated escape sequence"),
    ("unescaped-equals", "metadata.name==a=b", "'=' must be escaped"),
    ("unsupported-field", "spec.foo=bar", "field label not supported: spec.foo"),
    ("node-field-on-pod", "spec.unschedulable=true", "field label not supported: spec.unschedulable"),
]


@pytest.mark.parametrize(("text", "problem"), [c[1:] for c in FIELD_ERRORS], ids=[c[0] for c in FIELD_ERRORS])
def test_field_selector_errors(text: str, problem: str) -> None:
    with pytest.raises(errors.Invalid) as raised:
        FieldSelector.parse(text, kinds.POD)
    assert problem in raised.value.message


def test_field_selector_without_kind_defers_the_field_check() -> None:
    selector = FieldSelector.parse("spec.foo=bar")
    with pytest.raises(errors.Invalid, match=r"field label not supported: spec\.foo"):
        selector.check_supported(kinds.NODE)


def test_requires_exact() -> None:
    selector = FieldSelector.parse("spec.nodeName=n1,status.phase!=Failed")
    assert selector.requires_exact("spec.nodeName") == "n1"
    assert selector.requires_exact("status.phase") is None
    assert FieldSelector.parse("").empty


def test_object_fields_of_each_kind() -> None:
    node = objects_pb2.Node()
    node.metadata.name = "n1"
    node.spec.unschedulable = True
    assert object_fields(kinds.NODE, node) == {
        "metadata.name": "n1", "metadata.namespace": "", "spec.unschedulable": "true",
    }
    event = objects_pb2.Event(reason="Scheduled", type="Normal")
    event.involved_object.kind = "Pod"
    event.involved_object.name = "web"
    event.involved_object.namespace = "default"
    event.involved_object.uid = "u1"
    fields = object_fields(kinds.EVENT, event)
    assert fields["involvedObject.kind"] == "Pod"
    assert fields["involvedObject.name"] == "web"
    assert fields["involvedObject.namespace"] == "default"
    assert fields["involvedObject.uid"] == "u1"
    assert fields["reason"] == "Scheduled"
    assert fields["type"] == "Normal"
    lease = objects_pb2.Lease()
    lease.metadata.name = "sched"
    lease.metadata.namespace = "kube-system"
    assert object_fields(kinds.LEASE, lease) == {
        "metadata.name": "sched", "metadata.namespace": "kube-system",
    }
    assert supported_fields(kinds.PRIORITY_CLASS) == {"metadata.name", "metadata.namespace"}
    assert {"spec.nodeName", "spec.schedulerName", "status.phase", "status.nominatedNodeName"} <= (
        supported_fields(kinds.POD)
    )


def test_object_fields_reads_only_the_named_fields() -> None:
    pod = objects_pb2.Pod()
    pod.metadata.name, pod.status.phase = "web", "Running"
    selector = FieldSelector.parse(
        "status.phase!=Failed,status.phase!=Succeeded,metadata.name=web", kinds.POD
    )
    assert selector.field_names == ("metadata.name", "status.phase")
    fields = object_fields(kinds.POD, pod, selector.field_names)
    assert fields == {"metadata.name": "web", "status.phase": "Running"}
    assert selector.matches(object_fields(kinds.POD, pod, selector.field_names))
