// SPDX-License-Identifier: Apache-2.0
// libxml2's streaming reader behind plain C calls (see include/CXMLReader.h).
#include "CXMLReader.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlreader.h>

struct sg_xml_reader {
    xmlTextReaderPtr r;
};

_Static_assert(SG_XML_ELEMENT == XML_READER_TYPE_ELEMENT, "element");
_Static_assert(SG_XML_TEXT == XML_READER_TYPE_TEXT, "text");
_Static_assert(SG_XML_CDATA == XML_READER_TYPE_CDATA, "cdata");
_Static_assert(SG_XML_END_ELEMENT == XML_READER_TYPE_END_ELEMENT, "end element");

void sg_xml_init(void) { xmlInitParser(); }

sg_xml_reader *sg_xml_open(const char *bytes, int length) {
    // Why NONET and no entity substitution: a file from elsewhere must not make the gate
    // fetch anything or expand entities into memory.
    int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
    xmlTextReaderPtr r = xmlReaderForMemory(bytes, length, NULL, NULL, options);
    if (r == NULL) return NULL;
    sg_xml_reader *reader = xmlMalloc(sizeof *reader);
    if (reader == NULL) {
        xmlFreeTextReader(r);
        return NULL;
    }
    reader->r = r;
    return reader;
}

void sg_xml_close(sg_xml_reader *reader) {
    if (reader == NULL) return;
    xmlFreeTextReader(reader->r);
    xmlFree(reader);
}

int sg_xml_read(sg_xml_reader *reader) { return xmlTextReaderRead(reader->r); }

int sg_xml_node_type(sg_xml_reader *reader) { return xmlTextReaderNodeType(reader->r); }

int sg_xml_is_empty_element(sg_xml_reader *reader) { return xmlTextReaderIsEmptyElement(reader->r); }

const char *sg_xml_local_name(sg_xml_reader *reader) {
    return (const char *)xmlTextReaderConstLocalName(reader->r);
}

const char *sg_xml_value(sg_xml_reader *reader) { return (const char *)xmlTextReaderConstValue(reader->r); }

int sg_xml_move_to_attribute(sg_xml_reader *reader, const char *name) {
    return xmlTextReaderMoveToAttribute(reader->r, (const xmlChar *)name);
}

void sg_xml_move_to_element(sg_xml_reader *reader) { xmlTextReaderMoveToElement(reader->r); }

int sg_xml_line(sg_xml_reader *reader) {
    xmlNodePtr node = xmlTextReaderCurrentNode(reader->r);
    if (node == NULL) return xmlTextReaderGetParserLineNumber(reader->r);
    return (int)xmlGetLineNo(node);
}

void sg_xml_reset_last_error(void) { xmlResetLastError(); }

const char *sg_xml_last_error_message(void) {
    const xmlError *e = xmlGetLastError();
    return e == NULL ? NULL : e->message;
}

int sg_xml_last_error_line(void) {
    const xmlError *e = xmlGetLastError();
    return e == NULL ? 0 : e->line;
}
