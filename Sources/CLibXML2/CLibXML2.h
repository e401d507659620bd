// Shim header for libxml2. Only MediaSyncFeeds imports this module (`internal import CLibXML2`).
#ifndef CLIBXML2_SHIM_H
#define CLIBXML2_SHIM_H

// Debian builds libxml2 with ICU; its headers then pull in ICU types that clash with Foundation's
// copy ("'UErrorCode' has different definitions in different modules"). Include the version header
// first and hide the ICU switch before anything else sees it.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlreader.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlIO.h>
#include <libxml/uri.h>
#include <libxml/HTMLparser.h>

/// `xmlFree` is a global function pointer, which Swift 6 treats as not concurrency-safe.
static inline void cxml_free(void *_Nullable pointer) {
    if (pointer != NULL) {
        xmlFree(pointer);
    }
}

static inline void cxml_ignore_generic_error(void *_Nullable context, const char *_Nullable message, ...) {
    (void)context;
    (void)message;
}

static inline void cxml_ignore_structured_error(void *_Nullable context, xmlErrorPtr _Nullable error) {
    (void)context;
    (void)error;
}

static inline xmlParserInputPtr _Nullable cxml_refuse_external_entity(
    const char *_Nullable url, const char *_Nullable identifier, xmlParserCtxtPtr _Nullable context) {
    (void)url;
    (void)identifier;
    (void)context;
    return NULL;
}

/// Stops libxml2 from printing to stderr on the calling thread (libxml2 keeps these per thread),
/// and refuses every external entity or DTD load process-wide.
/// The corresponding C functions are `xmlSetGenericErrorFunc`, `xmlSetStructuredErrorFunc` and
/// `xmlSetExternalEntityLoader`.
static inline void cxml_prepare_thread(void) {
    xmlSetGenericErrorFunc(NULL, cxml_ignore_generic_error);
    xmlSetStructuredErrorFunc(NULL, cxml_ignore_structured_error);
    xmlSetExternalEntityLoader(cxml_refuse_external_entity);
}

/// The Unicode code point of an HTML 4 named entity (`nbsp` -> 160), or 0 when unknown.
/// The corresponding C function is `htmlEntityLookup`.
static inline unsigned int cxml_html_entity_value(const xmlChar *_Nonnull name) {
    const htmlEntityDesc *desc = htmlEntityLookup(name);
    return desc == NULL ? 0 : desc->value;
}

#endif
