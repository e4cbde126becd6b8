/* SPDX-License-Identifier: MIT */
/*
 * shortname.h - the short form of a demangled C++ name, for tables and
 * stacks.
 *
 * A demangled name carries its return type (function templates), every
 * template argument list and the parameter list: in ninja, 665 of 1,751
 * names are over 200 characters. The short form keeps the qualified name
 * and drops the rest:
 *
 *   std::map<std::string, int, ...>::operator[](std::string const&)
 *	short:  std::map::operator[]
 *	params: std::map::operator[](std::string const&)
 *   bool __gnu_cxx::operator< <int*, ...>(...)	short: __gnu_cxx::operator<
 *
 * Operator names (operator<, operator<<, operator->, operator(), operator
 * new[], conversions), lambdas ({lambda(int)#1}), anonymous namespaces
 * and gcc's clone suffixes ([clone .constprop.0], kept: a clone is a
 * function of its own) are understood. A name the scanner cannot follow
 * (brackets that do not balance) is returned whole.
 *
 * Contract: pure functions, no global state.
 */
#ifndef FDRTRACE_TOOL_SHORTNAME_H
#define FDRTRACE_TOOL_SHORTNAME_H

#include <stdbool.h>

/* The forms, shortest first: each tells apart more of the names that share the one before. */
enum cxx_form {
	CXX_SHORT,	/* the qualified name: std::map::operator[] */
	CXX_PARAMS,	/* and the parameter list and the qualifiers after it
			 * (const, &&), their template arguments elided too:
			 * overloads */
	CXX_OUTER,	/* and the outermost template argument lists, without
			 * the lists inside them: std::vector<std::pair>::size()
			 * const (instances of a template) */
};

/**
 * cxx_short_name - a short form of a demangled C++ name
 * @full: the demangled name (a C name comes back unchanged)
 * @form: which (enum cxx_form)
 *
 * Return: a new string (free()), or NULL when out of memory.
 */
char *cxx_short_name(const char *full, enum cxx_form form);

#endif /* FDRTRACE_TOOL_SHORTNAME_H */
