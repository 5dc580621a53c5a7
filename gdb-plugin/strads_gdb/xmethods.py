"""xmethods for strads::dvector and strads::dmatrix: `p W.size()`, `p W[17]`, `p M.rows()`,
`p M.width()` and `p M[5]` (row 5 as an array of width values) without running the inferior.

They read the node's array directly (no access hook, no collective), so they also work on a
core file; an index outside [0, size) is an error naming the DDS.
"""

import gdb
import gdb.xmethod

from . import dds
from . import inferior_values as iv


class DvectorSizeWorker(gdb.xmethod.XMethodWorker):
    def get_arg_types(self):
        return None

    def get_result_type(self, obj):
        return gdb.lookup_type("long")

    def __call__(self, obj):
        try:
            return gdb.Value(dds.DvectorView(obj).size)
        except iv.READ_ERRORS as error:
            raise gdb.GdbError(iv.describe_error("strads::dvector", error))


class DvectorIndexWorker(gdb.xmethod.XMethodWorker):
    def get_arg_types(self):
        return gdb.lookup_type("long")

    def get_result_type(self, obj, index):
        return iv.the_object(obj).type.template_argument(0)

    def __call__(self, obj, index):
        try:
            return dds.DvectorView(obj).element(int(index))
        except IndexError as error:
            raise gdb.GdbError(str(error))
        except iv.READ_ERRORS as error:
            raise gdb.GdbError(iv.describe_error("strads::dvector", error))


class DmatrixCountWorker(gdb.xmethod.XMethodWorker):
    """rows() or width() of a dmatrix."""

    def __init__(self, field):
        self.field = field

    def get_arg_types(self):
        return None

    def get_result_type(self, obj):
        return gdb.lookup_type("long")

    def __call__(self, obj):
        try:
            view = dds.DmatrixView(obj)
            return gdb.Value(view.size if self.field == "rows" else view.width)
        except iv.READ_ERRORS as error:
            raise gdb.GdbError(iv.describe_error("strads::dmatrix", error))


class DmatrixRowWorker(gdb.xmethod.XMethodWorker):
    """M[i]: in the program a std::span over row i; here the row as an array of width values,
    which gdb prints in full (a span would print as a pointer and a length)."""

    def get_arg_types(self):
        return gdb.lookup_type("long")

    def get_result_type(self, obj, index):
        try:
            view = dds.DmatrixView(obj)
        except iv.READ_ERRORS:
            return None
        return view.element_type.array(view.width - 1)

    def __call__(self, obj, index):
        try:
            return dds.DmatrixView(obj).element(int(index))
        except IndexError as error:
            raise gdb.GdbError(str(error))
        except iv.READ_ERRORS as error:
            raise gdb.GdbError(iv.describe_error("strads::dmatrix", error))


class DmatrixMatcher(gdb.xmethod.XMethodMatcher):
    def __init__(self):
        gdb.xmethod.XMethodMatcher.__init__(self, "strads-dmatrix")
        self.methods = [gdb.xmethod.XMethod(name) for name in ("rows", "width", "operator[]")]
        self.workers = {"rows": DmatrixCountWorker("rows"), "width": DmatrixCountWorker("width"),
                        "operator[]": DmatrixRowWorker()}

    def match(self, class_type, method_name):
        tag = class_type.strip_typedefs().tag
        if not tag or not tag.startswith("strads::dmatrix<"):
            return None
        for method in self.methods:
            if method.name == method_name and method.enabled:
                return self.workers[method_name]
        return None


class DvectorMatcher(gdb.xmethod.XMethodMatcher):
    def __init__(self):
        gdb.xmethod.XMethodMatcher.__init__(self, "strads")
        self.methods = [gdb.xmethod.XMethod("size"), gdb.xmethod.XMethod("operator[]")]
        self.workers = {"size": DvectorSizeWorker(), "operator[]": DvectorIndexWorker()}

    def match(self, class_type, method_name):
        if not class_type.strip_typedefs().tag or not class_type.strip_typedefs().tag.startswith(
                "strads::dvector<"):
            return None
        for method in self.methods:
            if method.name == method_name and method.enabled:
                return self.workers[method_name]
        return None
