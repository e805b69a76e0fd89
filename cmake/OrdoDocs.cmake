# The HTML documentation site: doxygen over the public headers and docs/*.md (docs/index.md is the
# main page), with plan trees drawn by Graphviz from `ordo-plan --dot`. Target `docs`; doxygen's
# warnings are errors (WARN_AS_ERROR = FAIL_ON_WARNINGS). Included by the top-level CMakeLists.txt
# when ordo is the top-level project; docs/development.md describes it.

option(ORDO_BUILD_DOCS "Define the docs target (doxygen + Graphviz) when doxygen is found" ON)
if(NOT ORDO_BUILD_DOCS)
  return()
endif()

# Debian bookworm's doxygen is 1.9.4; FAIL_ON_WARNINGS needs 1.9.
find_package(Doxygen 1.9 QUIET COMPONENTS dot)
if(NOT TARGET Doxygen::doxygen OR NOT TARGET Doxygen::dot)
  message(STATUS "ordo: doxygen >= 1.9 and Graphviz's dot not both found (apt-get install doxygen graphviz, "
                 "or scripts/setup); the docs target is not defined")
  return()
endif()

set(ORDO_DOCS_DIR "${PROJECT_BINARY_DIR}/docs")
set(ORDO_DOCS_DOT_DIR "${ORDO_DOCS_DIR}/dot")
set(ORDO_DOCS_PAGES_DIR "${ORDO_DOCS_DIR}/pages")
file(MAKE_DIRECTORY "${ORDO_DOCS_DOT_DIR}" "${ORDO_DOCS_PAGES_DIR}")

# The headers' comments are plain // comments (docs/architecture.md's style). Doxygen reads them
# through this filter, which turns into documentation:
#   - the comment block that opens a header (after its include guard) into the file's description;
#   - a comment block directly above a declaration, at namespace or class scope, into that
#     declaration's description (a block followed by a blank line stays a plain comment);
#   - `member;  // text` at namespace or class scope into a trailing member description.
# Comments inside function bodies stay plain comments: a brace is a scope when a namespace,
# class, struct, union, enum or extern keyword precedes it, any other brace opens a body.
set(ORDO_DOCS_FILTER "${ORDO_DOCS_DIR}/comments_to_docs.awk")
file(CONFIGURE OUTPUT "${ORDO_DOCS_FILTER}" @ONLY CONTENT [==[
function at_scope() { return bodies == 0 }
function flush(next_line,   i, doc, text, code, was_code) {
  if (held == 0) return
  doc = at_scope() && (file_doc || next_line !~ /^[[:space:]]*$/)
  if (doc && file_doc) print "/// \\file"
  was_code = 0
  for (i = 1; i <= held; ++i) {
    line = buffer[i]
    if (!doc) { print line; continue }
    # Lines indented by 3 or more spaces are code or aligned columns: a verbatim block, set off
    # by blank lines as Markdown wants. In prose, `x)::name()` would read as a link request.
    text = line
    sub(/^[[:space:]]*\/\//, "", text)
    code = (text ~ /^   /)
    if (code != was_code && i > 1) print "///"
    if (code) print "///    " text
    else { gsub(/[^[:alnum:]_]::/, "&%", text); print "///" text }
    was_code = code
  }
  held = 0
  if (file_doc) guard = 2
  file_doc = 0
}
# Counts braces outside strings, characters and comments; a brace is a scope when a scope keyword
# came before it since the last ; { or }.
function track(code,   i, c, segment) {
  gsub(/"([^"\\]|\\.)*"/, "\"\"", code)
  gsub(/'(\\.|[^'\\])'/, "' '", code)
  sub(/\/\/.*$/, "", code)
  gsub(/[<,][[:space:]]*(class|typename)[.[:space:]]/, "<", code)
  segment = ""
  for (i = 1; i <= length(code); ++i) {
    c = substr(code, i, 1)
    if (c == "{") {
      kind[++depth] = (pending || segment ~ scope_keyword) ? "scope" : "body"
      if (kind[depth] == "body") ++bodies
      pending = 0; segment = ""
    } else if (c == "}") {
      if (depth > 0) { if (kind[depth] == "body") --bodies; --depth }
      pending = 0; segment = ""
    } else if (c == ";") {
      pending = 0; segment = ""
    } else {
      segment = segment c
    }
  }
  if (segment ~ scope_keyword) pending = 1
}
BEGIN {
  scope_keyword = "(^|[^[:alnum:]_])(namespace|class|struct|union|enum|extern)([^[:alnum:]_]|$)"
  depth = 0; bodies = 0; pending = 0; held = 0; guard = 0; file_doc = 0; continued = 0
  held_template = ""; in_std = 0
}
{
  if (continued) { continued = ($0 ~ /\\$/); print; next }
  if ($0 ~ /^[[:space:]]*\/\//) {
    if (held == 0 && guard == 1) file_doc = 1
    buffer[++held] = $0
    next
  }
  flush($0)
  # Doxygen 1.9.4 cannot place a specialization of a std template (`template <> class
  # std::numeric_limits<ordo::half>`, an "internal inconsistency"): such declarations are hidden
  # from it.
  if (held_template != "") {
    if ($0 ~ /^(class|struct)[[:space:]]+std::/) { print "/// \\cond"; in_std = 1 }
    print held_template
    held_template = ""
  }
  if ($0 ~ /^[[:space:]]*#/) {
    if ($0 ~ /^#define ORDO_[A-Z0-9_]*_HPP[[:space:]]*$/ && guard == 0) guard = 1
    continued = ($0 ~ /\\$/)
    print
    next
  }
  if ($0 !~ /^[[:space:]]*$/) guard = 2
  if ($0 ~ /^template[[:space:]]*<>[[:space:]]*$/ && at_scope()) { held_template = $0; next }
  line = $0
  if (at_scope() && line !~ /"/ && line ~ /[;,][[:space:]]+\/\/[[:space:]]/) sub(/\/\//, "///<", line)
  track($0)
  print line
  if (in_std && $0 ~ /};[[:space:]]*$/ && at_scope()) { print "/// \\endcond"; in_std = 0 }
}
END { flush(""); if (held_template != "") print held_template }
]==])

# The Markdown pages are written for GitHub, and doxygen reads them through this filter, which
# changes nothing that GitHub shows:
#   - every heading below the title gets the label GitHub gives it, prefixed by the page's name
#     (`## Planners` in chain.md: chain-planners), so that links to `#planners` and to
#     `chain.md#planners` become links within the site; a link to a heading that does not exist
#     goes to the page, as on GitHub;
#   - links to ../examples/NAME.cpp go to the example's page (see the examples page below);
#   - `x)::name()` in text gets doxygen's no-link mark (`::%name`), or doxygen reads it as a
#     link request.
# Fenced code blocks are left alone.
set(ORDO_DOCS_MD_FILTER "${ORDO_DOCS_DIR}/markdown_for_doxygen.awk")
file(CONFIGURE OUTPUT "${ORDO_DOCS_MD_FILTER}" @ONLY CONTENT [==[
function github_slug(title,   slug) {
  slug = tolower(title)
  gsub(/[^a-z0-9 _-]/, "", slug)
  gsub(/ /, "-", slug)
  return slug
}
function page_of(file,   name) {
  name = file
  sub(/^.*\//, "", name)
  sub(/\.md$/, "", name)
  return name
}
# The labels of a page's headings, as GitHub numbers repeated ones (goals, goals-1, ...), in
# labels[file, slug]; read once per file.
function read_labels(file,   line, in_fence, slug, count) {
  if (file in scanned) return
  scanned[file] = 1
  in_fence = 0
  while ((getline line < file) > 0) {
    if (line ~ /^[[:space:]]*(```|~~~)/) { in_fence = !in_fence; continue }
    if (in_fence || line !~ /^##+[[:space:]]/) continue
    slug = heading_slug(line)
    if ((file, slug) in count_of) { count = count_of[file, slug]; count_of[file, slug] = count + 1; slug = slug "-" count }
    else count_of[file, slug] = 1
    labels[file, slug] = 1
  }
  close(file)
}
function heading_slug(line,   title) {
  title = line
  sub(/^#+[[:space:]]+/, "", title)
  sub(/[[:space:]]*\{#[^}]*\}[[:space:]]*$/, "", title)
  sub(/[[:space:]#]*$/, "", title)
  return github_slug(title)
}
# A link to a heading of this page or of another one: to its label when the heading exists, else
# (as GitHub does) to the page.
function heading_link(file, anchor, fallback) {
  read_labels(file)
  if ((file, anchor) in labels) return "#" page_of(file) "-" anchor
  return fallback
}
# Rewrites the targets of Markdown links, ](target), in one line.
function links(line,   out, target, name, file) {
  out = ""
  while (match(line, /\]\([^) ]*\)/)) {
    target = substr(line, RSTART + 2, RLENGTH - 3)
    out = out substr(line, 1, RSTART + 1)
    line = substr(line, RSTART + RLENGTH - 1)
    if (target ~ /^#/) {
      target = heading_link(FILENAME, substr(target, 2), page ".md")
    } else if (target ~ /^[A-Za-z0-9_-]+\.md#/) {
      name = substr(target, 1, index(target, "#") - 1)
      file = directory name
      target = heading_link(file, substr(target, index(target, "#") + 1), name)
    } else if (target ~ /^\.\.\/examples\/[A-Za-z0-9_]+\.cpp$/) {
      name = target
      sub(/^\.\.\/examples\//, "", name)
      sub(/\.cpp$/, "", name)
      target = name "_8cpp-example.html"
    }
    out = out target
  }
  return out line
}
NR == 1 {
  page = page_of(FILENAME)
  directory = FILENAME
  if (!sub(/[^\/]*$/, "", directory)) directory = ""
}
/^[[:space:]]*(```|~~~)/ { fenced = !fenced; print; next }
fenced { print; next }
{
  line = $0
  if (line ~ /^##+[[:space:]]/ && line !~ /\{#[^}]*\}[[:space:]]*$/) {
    slug = heading_slug(line)
    if (slug in seen) { suffix = seen[slug]; seen[slug] = suffix + 1; slug = slug "-" suffix }
    else seen[slug] = 1
    line = line " {#" page "-" slug "}"
  }
  line = links(line)
  gsub(/[^[:alnum:]_]::/, "&%", line)
  print line
}
]==])

# Every example gets a page with its source (\example), described by its first comment line.
set(ORDO_DOCS_EXAMPLES_PAGE "${ORDO_DOCS_PAGES_DIR}/examples.dox")
file(GLOB ORDO_DOCS_EXAMPLES CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/examples/*.cpp")
set(ORDO_DOCS_EXAMPLES_TEXT "")
foreach(example IN LISTS ORDO_DOCS_EXAMPLES)
  get_filename_component(name "${example}" NAME)
  file(STRINGS "${example}" comments REGEX "^// [^ ]")
  list(FILTER comments EXCLUDE REGEX "^// needs:")
  set(summary "")
  if(comments)
    list(GET comments 0 summary)
    string(REGEX REPLACE "^// " "" summary "${summary}")
  endif()
  string(APPEND ORDO_DOCS_EXAMPLES_TEXT "/** \\example ${name}\n${summary}\n*/\n")
endforeach()
file(CONFIGURE OUTPUT "${ORDO_DOCS_EXAMPLES_PAGE}" @ONLY CONTENT "${ORDO_DOCS_EXAMPLES_TEXT}")
set(ORDO_DOCS_GENERATED_PAGES "${ORDO_DOCS_EXAMPLES_PAGE}")

# The CLRS chain (CLRS 3rd ed., 15.2: dims 30 35 15 5 10 20 25) drawn from ordo-plan's own output.
set(ORDO_DOCS_DOT_FILES)
if(TARGET ordo-plan)
  set(clrs_dot "${ORDO_DOCS_DOT_DIR}/clrs_chain.dot")
  add_custom_command(OUTPUT "${clrs_dot}"
    COMMAND ordo-plan --dot 30 35 15 5 10 20 25 > "${clrs_dot}"
    DEPENDS ordo-plan
    COMMENT "ordo-plan --dot 30 35 15 5 10 20 25")
  list(APPEND ORDO_DOCS_DOT_FILES "${clrs_dot}")
  set(plan_tree_page "${ORDO_DOCS_PAGES_DIR}/plan_tree.dox")
  file(CONFIGURE OUTPUT "${plan_tree_page}" @ONLY CONTENT [==[
/**
\page plan_tree A plan tree: the CLRS chain

The six matrices of CLRS's example (3rd ed., section 15.2), with dims 30 35 15 5 10 20 25, as
`ordo-plan --dot 30 35 15 5 10 20 25` prints them and Graphviz draws them. The docs build runs
the tool, so the drawing is the planner's own answer. Boxes are the matrices A1..A6 with their
shapes; each ellipse is one product, labelled with the operands it covers, its shape and its
multiplications; the left edge of a product goes to its left factor. The graph's label is the
order and the total cost.

\dotfile clrs_chain.dot "ordo-plan --dot 30 35 15 5 10 20 25"

The same chain is planned at compile time, and checked, in q02_chain_dp.cpp;
\ref md_docs_ordo_plan "ordo-plan" documents the tool's options and output formats, and
\ref md_docs_chain "The matrix-chain planner" the planner.
*/
]==])
  list(APPEND ORDO_DOCS_GENERATED_PAGES "${plan_tree_page}")
else()
  message(STATUS "ordo: ordo-plan is not built (ORDO_BUILD_TOOLS=OFF); the docs have no plan-tree page")
endif()
string(REPLACE ";" " " ORDO_DOCS_GENERATED_INPUT "${ORDO_DOCS_GENERATED_PAGES}")

configure_file("${PROJECT_SOURCE_DIR}/docs/Doxyfile.in" "${ORDO_DOCS_DIR}/Doxyfile" @ONLY)

file(GLOB_RECURSE ORDO_DOCS_SOURCES CONFIGURE_DEPENDS
     "${PROJECT_SOURCE_DIR}/include/ordo/*.hpp" "${PROJECT_SOURCE_DIR}/docs/*.md"
     "${PROJECT_SOURCE_DIR}/docs/*.png" "${PROJECT_SOURCE_DIR}/examples/*.cpp")
# The stamp is touched only when doxygen succeeds, so a failed run is repeated by the next build.
set(ORDO_DOCS_STAMP "${ORDO_DOCS_DIR}/html.stamp")
add_custom_command(OUTPUT "${ORDO_DOCS_STAMP}"
  COMMAND "${CMAKE_COMMAND}" -E remove_directory "${ORDO_DOCS_DIR}/html"
  COMMAND Doxygen::doxygen "${ORDO_DOCS_DIR}/Doxyfile"
  COMMAND "${CMAKE_COMMAND}" -E touch "${ORDO_DOCS_STAMP}"
  DEPENDS "${ORDO_DOCS_DIR}/Doxyfile" "${ORDO_DOCS_FILTER}" "${ORDO_DOCS_MD_FILTER}" ${ORDO_DOCS_SOURCES} ${ORDO_DOCS_DOT_FILES}
          ${ORDO_DOCS_GENERATED_PAGES}
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
  COMMENT "doxygen: ${ORDO_DOCS_DIR}/html/index.html"
  VERBATIM)
add_custom_target(docs DEPENDS "${ORDO_DOCS_STAMP}")
message(STATUS "ordo: docs target: doxygen ${DOXYGEN_VERSION} into ${ORDO_DOCS_DIR}/html")
