// SPDX-License-Identifier: Apache-2.0
// libxml2's streaming reader behind plain C calls, for reading GPX files.
//
// Why a wrapper: libxml2's headers include the system's ICU headers (unicode/utypes.h), and
// Foundation carries its own ICU. A Swift module that saw both would fail to build, depending
// on the order in which the compiler built its module cache. This header names no libxml2
// or ICU type, so Swift code that imports it never sees either.
#ifndef SPRINTGATE_CXMLREADER_H
#define SPRINTGATE_CXMLREADER_H

/// An open reader over a buffer in memory. Opaque.
typedef struct sg_xml_reader sg_xml_reader;

/// Node types, with libxml2's values (`XML_READER_TYPE_*`).
enum {
    SG_XML_ELEMENT = 1,
    SG_XML_TEXT = 3,
    SG_XML_CDATA = 4,
    SG_XML_END_ELEMENT = 15,
};

/// Initialises libxml2 once per process; safe to call again.
void sg_xml_init(void);

/// A reader over `length` bytes at `bytes`, which must outlive it. It fetches nothing from the
/// network, substitutes no entities and prints no error. NULL when libxml2 refuses the buffer.
sg_xml_reader *sg_xml_open(const char *bytes, int length);

/// Frees the reader.
void sg_xml_close(sg_xml_reader *reader);

/// Moves to the next node: 1 when there is one, 0 at the end, -1 on an error.
int sg_xml_read(sg_xml_reader *reader);

/// The current node's type (one of `SG_XML_*`, or another of libxml2's types).
int sg_xml_node_type(sg_xml_reader *reader);

/// 1 when the current element is empty (`<a/>`).
int sg_xml_is_empty_element(sg_xml_reader *reader);

/// The current node's local name, UTF-8, valid until the next read; NULL when it has none.
const char *sg_xml_local_name(sg_xml_reader *reader);

/// The current node's text, UTF-8, valid until the next read or move; NULL when it has none.
const char *sg_xml_value(sg_xml_reader *reader);

/// Moves to the current element's attribute `name`: 1 when found, then `sg_xml_value` reads it
/// and `sg_xml_move_to_element` moves back.
int sg_xml_move_to_attribute(sg_xml_reader *reader, const char *name);

/// Moves back from an attribute to its element.
void sg_xml_move_to_element(sg_xml_reader *reader);

/// The line of the current node, where the parser stored it; else where reading has got to.
int sg_xml_line(sg_xml_reader *reader);

/// Clears libxml2's last error for this thread.
void sg_xml_reset_last_error(void);

/// libxml2's last error for this thread: its message (NULL when none) and its line.
const char *sg_xml_last_error_message(void);
int sg_xml_last_error_line(void);

#endif
