"""xmethods for strads::dvector and strads::dmatrix: `p W.size()`, `p W[17]`, `p M.rows()`,
`p M.width()` and `p M[5]` (row 5 as an array of width values) without running the inferior.

They read the node's array directly (no access hook, no collective), so they also work on a
core file; an index outside [0, size) is an error naming the DDS.
"""

import gdb
import gdb.xmethod

from . import dds
from . import inferior_values as iv


class CountWorker(gdb.xmethod.XMethodWorker):
    """A count without arguments: `attribute` of the DDS's view (size, width)."""

    def __init__(self, view, kind, attribute):
        self.view, self.kind, self.attribute = view, kind, attribute

    def get_arg_types(self):
        return None

    def get_result_type(self, obj):
        return gdb.lookup_type("long")

    def __call__(self, obj):
        try:
            return gdb.Value(getattr(self.view(obj), self.attribute))
        except iv.READ_ERRORS as error:
            raise gdb.GdbError(iv.describe_error(self.kind, error))


class DvectorIndexWorker(gdb.xmethod.XMethodWorker):
    VIEW = dds.DvectorView
    KIND = "strads::dvector"

    def get_arg_types(self):
        return gdb.lookup_type("long")

    def get_result_type(self, obj, index):
        return iv.the_object(obj).type.template_argument(0)

    def __call__(self, obj, index):
        try:
            return self.VIEW(obj).element(int(index))
        except IndexError as error:
            raise gdb.GdbError(str(error))
        except iv.READ_ERRORS as error:
            raise gdb.GdbError(iv.describe_error(self.KIND, error))


class DmatrixRowWorker(DvectorIndexWorker):
    """M[i]: in the program a std::span over row i; here the row as an array of width values,
    which gdb prints in full (a span would print as a pointer and a length)."""
    VIEW = dds.DmatrixView
    KIND = "strads::dmatrix"

    def get_result_type(self, obj, index):
        try:
            view = dds.DmatrixView(obj)
        except iv.READ_ERRORS:
            return None
        return view.element_type.array(view.width - 1)


class TemplateMatcher(gdb.xmethod.XMethodMatcher):
    """The workers (method name -> worker) of the class template whose tag starts with
    `prefix`."""

    def __init__(self, name, prefix, workers):
        gdb.xmethod.XMethodMatcher.__init__(self, name)
        self.prefix = prefix
        self.methods = [gdb.xmethod.XMethod(method) for method in workers]
        self.workers = workers

    def match(self, class_type, method_name):
        tag = class_type.strip_typedefs().tag
        if not tag or not tag.startswith(self.prefix):
            return None
        for method in self.methods:
            if method.name == method_name and method.enabled:
                return self.workers[method_name]
        return None


def DvectorMatcher():
    return TemplateMatcher("strads", "strads::dvector<",
                           {"size": CountWorker(dds.DvectorView, "strads::dvector", "size"),
                            "operator[]": DvectorIndexWorker()})


def DmatrixMatcher():
    return TemplateMatcher("strads-dmatrix", "strads::dmatrix<",
                           {"rows": CountWorker(dds.DmatrixView, "strads::dmatrix", "size"),
                            "width": CountWorker(dds.DmatrixView, "strads::dmatrix", "width"),
                            "operator[]": DmatrixRowWorker()})
