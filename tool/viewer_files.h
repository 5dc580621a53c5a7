// The trace viewer's page (viewer/view.html, view.css, view.js), embedded at build time by
// cmake/embed_files.cmake into viewer_files.cc. view.html holds the places the others and the
// trace's data go: /*STRADS_VIEW_CSS*/, /*STRADS_VIEW_DATA*/, /*STRADS_VIEW_JS*/.
#pragma once

namespace strads::tool {

extern const char kViewHtml[];
extern const char kViewCss[];
extern const char kViewJs[];

}  // namespace strads::tool
