/* SPDX-License-Identifier: MIT */
/*
 * test_shortname.c - the short form of demangled C++ names: what g++ 12's
 * and clang 14's demangled symbols become in tables and stacks.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "shortname.h"

static void expect(const char *full, const char *brief, const char *with_params)
{
	char *s = cxx_short_name(full, CXX_SHORT);
	char *p = cxx_short_name(full, CXX_PARAMS);

	cr_assert_not_null(s);
	cr_assert_not_null(p);
	cr_expect_str_eq(s, brief, "short of '%s'", full);
	cr_expect_str_eq(p, with_params, "with parameters of '%s'", full);
	free(s);
	free(p);
}

Test(shortname, a_c_name_stays_as_it_is)
{
	expect("main", "main", "main");
	expect("luaH_get", "luaH_get", "luaH_get");
}

Test(shortname, overloads_differ_only_by_their_parameters)
{
	expect("geo::scale(double)", "geo::scale", "geo::scale(double)");
	expect("geo::scale(int)", "geo::scale", "geo::scale(int)");
}

Test(shortname, template_arguments_and_the_return_type_go)
{
	expect("double twice<double>(double)", "twice", "twice(double)");
	expect("std::map<std::__cxx11::basic_string<char, std::char_traits<char>, "
	       "std::allocator<char> >, int, std::less<std::__cxx11::basic_string<char, "
	       "std::char_traits<char>, std::allocator<char> > >, std::allocator<std::pair<"
	       "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
	       "const, int> > >::operator[](std::__cxx11::basic_string<char, "
	       "std::char_traits<char>, std::allocator<char> >&&)",
	       "std::map::operator[]", "std::map::operator[](std::__cxx11::basic_string&&)");
	expect("main::{lambda(int)#1} const& std::_Any_data::_M_access<main::{lambda(int)#1}>() "
	       "const",
	       "std::_Any_data::_M_access", "std::_Any_data::_M_access() const");
}

Test(shortname, operators_keep_their_symbols)
{
	expect("bool __gnu_cxx::operator< <int*, std::vector<int, std::allocator<int> > >("
	       "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > "
	       "const&, __gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> "
	       "> > const&)",
	       "__gnu_cxx::operator<",
	       "__gnu_cxx::operator<(__gnu_cxx::__normal_iterator const&, "
	       "__gnu_cxx::__normal_iterator const&)");
	expect("bool __gnu_cxx::operator==<int*, std::vector<int> >(int*, int*)",
	       "__gnu_cxx::operator==", "__gnu_cxx::operator==(int*, int*)");
	expect("__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >"
	       "::difference_type __gnu_cxx::operator-<int*, std::vector<int> >(int*, int*)",
	       "__gnu_cxx::operator-", "__gnu_cxx::operator-(int*, int*)");
	expect("S::operator<<(int)", "S::operator<<", "S::operator<<(int)");
	expect("S::operator()(int) const", "S::operator()", "S::operator()(int) const");
	expect("S::operator int() const", "S::operator int", "S::operator int() const");
	expect("S::operator->() const", "S::operator->", "S::operator->() const");
	expect("operator new[](unsigned long)", "operator new[]",
	       "operator new[](unsigned long)");
	expect("std::function<int (int)>::operator()(int) const", "std::function::operator()",
	       "std::function::operator()(int) const");
	expect("bool __gnu_cxx::__ops::_Iter_less_val::operator()<__gnu_cxx::__normal_iterator<"
	       "int*, std::vector<int, std::allocator<int> > >, int>(__gnu_cxx::__normal_iterator<"
	       "int*, std::vector<int, std::allocator<int> > >, int&) const",
	       "__gnu_cxx::__ops::_Iter_less_val::operator()",
	       "__gnu_cxx::__ops::_Iter_less_val::operator()(__gnu_cxx::__normal_iterator, int&) "
	       "const");
}

Test(shortname, const_and_non_const_members_stay_apart_with_parameters)
{
	expect("std::vector<int>::begin()", "std::vector::begin", "std::vector::begin()");
	expect("std::vector<int>::begin() const", "std::vector::begin",
	       "std::vector::begin() const");
}

Test(shortname, lambdas_anonymous_namespaces_and_clones)
{
	expect("(anonymous namespace)::anon(int)", "(anonymous namespace)::anon",
	       "(anonymous namespace)::anon(int)");
	expect("main::{lambda(std::vector<int, std::allocator<int> > const&)#1}::operator()("
	       "std::vector<int, std::allocator<int> > const&) const",
	       "main::{lambda(std::vector const&)#1}::operator()",
	       "main::{lambda(std::vector const&)#1}::operator()(std::vector const&) const");
	expect("foo(int) [clone .constprop.0]", "foo [clone .constprop.0]",
	       "foo(int) [clone .constprop.0]");
	expect("S::~S()", "S::~S", "S::~S()");
}

Test(shortname, a_name_whose_brackets_do_not_balance_comes_back_whole)
{
	expect("broken<int(", "broken<int(", "broken<int(");
	expect("a>b", "a>b", "a>b");
	expect("", "", "");
}

Test(shortname, instances_of_a_template_keep_their_outermost_arguments)
{
	char *a = cxx_short_name("std::allocator<char>::~allocator()", CXX_OUTER);
	char *b = cxx_short_name("std::allocator<std::_Rb_tree_node<std::pair<std::__cxx11::"
				 "basic_string<char, std::char_traits<char>, std::allocator<char> "
				 "> const, int> > >::~allocator()", CXX_OUTER);
	char *c = cxx_short_name("double twice<double>(std::vector<int, std::allocator<int> >)",
				 CXX_OUTER);

	cr_expect_str_eq(a, "std::allocator<char>::~allocator()");
	cr_expect_str_eq(b, "std::allocator<std::_Rb_tree_node>::~allocator()");
	cr_expect_str_eq(c, "twice<double>(std::vector<int, std::allocator>)");
	free(a);
	free(b);
	free(c);
}
