// The strads API in one include.
#pragma once

#include "strads/accumulator.h"
#include "strads/async_for.h"
#include "strads/dmap.h"
#include "strads/dmatrix.h"
#include "strads/dmultimap.h"
#include "strads/dvector.h"
#include "strads/errors.h"
#include "strads/flag_checks.h"
#include "strads/operators.h"
#include "strads/parallel_for.h"
#include "strads/relational.h"
#include "strads/runtime.h"
#include "strads/sync_for.h"
