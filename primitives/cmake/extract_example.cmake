# Writes the code block of README.md between "<!-- example:NAME:begin -->" and
# "<!-- example:NAME:end -->" (without its ``` fence) to OUT, so the guide's example is
# compiled exactly as the model reads it.
# Usage: cmake -DREADME=... -DNAME=... -DOUT=... -P extract_example.cmake
file(READ "${README}" text)
set(begin_marker "<!-- example:${NAME}:begin -->")
set(end_marker "<!-- example:${NAME}:end -->")
string(FIND "${text}" "${begin_marker}" begin)
string(FIND "${text}" "${end_marker}" end)
if(begin EQUAL -1 OR end EQUAL -1 OR end LESS begin)
  message(FATAL_ERROR "${README}: no example '${NAME}' between '${begin_marker}' and '${end_marker}'")
endif()
string(LENGTH "${begin_marker}" marker_length)
math(EXPR begin "${begin} + ${marker_length}")
math(EXPR length "${end} - ${begin}")
string(SUBSTRING "${text}" ${begin} ${length} block)
string(REGEX REPLACE "^[ \t\r\n]*```[a-z]*[ \t]*\r?\n" "" block "${block}")
string(REGEX REPLACE "```[ \t\r\n]*$" "" block "${block}")
file(WRITE "${OUT}" "${block}")
