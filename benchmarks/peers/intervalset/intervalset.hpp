// A stand-in for the intervalset library (sets of closed integer intervals) that Batsim and
// batsched link against. Written for benchmarks/peers/build_batsim.sh, from the library's
// documented interface, because its own repository cannot be fetched on the benchmark machine.
// A thin layer over Boost.ICL's interval_set, as the original is.
#pragma once

#include <string>

#include <boost/icl/closed_interval.hpp>
#include <boost/icl/interval_set.hpp>

struct IntervalSet
{
    typedef boost::icl::closed_interval<int, std::less> ClosedInterval;
    typedef boost::icl::interval_set<int, ICL_COMPARE_INSTANCE(ICL_COMPARE_DEFAULT, int), ClosedInterval> Set;
    typedef Set::element_const_iterator element_const_iterator;
    typedef Set::const_iterator const_iterator;

    IntervalSet();
    IntervalSet(const ClosedInterval & interval);
    IntervalSet(const IntervalSet & other);
    IntervalSet(int integer);

    element_const_iterator elements_begin() const;
    element_const_iterator elements_end() const;
    const_iterator intervals_begin() const;
    const_iterator intervals_end() const;

    void clear();
    void insert(const IntervalSet & interval_set);
    void insert(ClosedInterval interval);
    void insert(int integer);
    void remove(const IntervalSet & interval_set);
    void remove(ClosedInterval interval);
    void remove(int integer);

    // The nb_integers smallest elements (throws std::out_of_range if there are fewer).
    IntervalSet left(unsigned int nb_integers) const;
    // nb_integers elements drawn at random (throws std::out_of_range if there are fewer).
    IntervalSet random_pick(unsigned int nb_integers) const;
    // The largest interval (the first of equal ones), intervals_end() if empty.
    const_iterator biggest_interval() const;
    int first_element() const;
    unsigned int size() const;
    bool is_empty() const;
    bool contains(int integer) const;
    bool contains(const ClosedInterval & interval) const;
    bool is_subset_of(const IntervalSet & other) const;

    std::string to_string_brackets(const std::string & union_str = "∪",
                                   const std::string & opening_bracket = "[",
                                   const std::string & closing_bracket = "]",
                                   const std::string & sep = ",") const;
    std::string to_string_hyphen(const std::string & sep = ",", const std::string & joiner = "-") const;
    std::string to_string_elements(const std::string & sep = ",") const;

    IntervalSet & operator=(const IntervalSet & other);
    IntervalSet & operator=(const ClosedInterval & interval);
    bool operator==(const IntervalSet & other) const;
    bool operator!=(const IntervalSet & other) const;
    IntervalSet & operator&=(const IntervalSet & other);
    IntervalSet & operator-=(const IntervalSet & other);
    IntervalSet & operator+=(const IntervalSet & other);
    IntervalSet operator-(const IntervalSet & other) const;
    IntervalSet operator+(const IntervalSet & other) const;
    IntervalSet operator&(const IntervalSet & other) const;
    // The index-th smallest element (throws std::out_of_range outside [0, size())).
    int operator[](int index) const;

    static IntervalSet empty_interval_set();
    // Parses "1-3,7" (sep between parts, joiner inside a part); throws std::invalid_argument.
    static IntervalSet from_string_hyphen(const std::string & str, const std::string & sep = ",",
                                          const std::string & joiner = "-");

private:
    Set set;
};
