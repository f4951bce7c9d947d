// The stand-in's implementation: see intervalset.hpp.
#include "intervalset.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

#include <boost/algorithm/string.hpp>

namespace
{
int interval_size(const IntervalSet::ClosedInterval & interval)
{
    return interval.upper() - interval.lower() + 1;
}

std::string join(const std::vector<std::string> & parts, const std::string & sep)
{
    return boost::algorithm::join(parts, sep);
}
}

IntervalSet::IntervalSet() {}
IntervalSet::IntervalSet(const ClosedInterval & interval) { set.insert(interval); }
IntervalSet::IntervalSet(const IntervalSet & other) : set(other.set) {}
IntervalSet::IntervalSet(int integer) { set.insert(integer); }

IntervalSet::element_const_iterator IntervalSet::elements_begin() const { return boost::icl::elements_begin(set); }
IntervalSet::element_const_iterator IntervalSet::elements_end() const { return boost::icl::elements_end(set); }
IntervalSet::const_iterator IntervalSet::intervals_begin() const { return set.begin(); }
IntervalSet::const_iterator IntervalSet::intervals_end() const { return set.end(); }

void IntervalSet::clear() { set.clear(); }
void IntervalSet::insert(const IntervalSet & interval_set) { set += interval_set.set; }
void IntervalSet::insert(ClosedInterval interval) { set.insert(interval); }
void IntervalSet::insert(int integer) { set.insert(integer); }
void IntervalSet::remove(const IntervalSet & interval_set) { set -= interval_set.set; }
void IntervalSet::remove(ClosedInterval interval) { set -= interval; }
void IntervalSet::remove(int integer) { set -= integer; }

IntervalSet IntervalSet::left(unsigned int nb_integers) const
{
    if (size() < nb_integers)
        throw std::out_of_range("IntervalSet::left: " + std::to_string(nb_integers) +
                                " elements asked of a set of " + std::to_string(size()));
    IntervalSet result;
    unsigned int taken = 0;
    for (auto it = intervals_begin(); it != intervals_end() && taken < nb_integers; ++it)
    {
        unsigned int take = std::min<unsigned int>(interval_size(*it), nb_integers - taken);
        result.insert(ClosedInterval(it->lower(), it->lower() + (int)take - 1));
        taken += take;
    }
    return result;
}

IntervalSet IntervalSet::random_pick(unsigned int nb_integers) const
{
    if (size() < nb_integers)
        throw std::out_of_range("IntervalSet::random_pick: " + std::to_string(nb_integers) +
                                " elements asked of a set of " + std::to_string(size()));
    std::vector<int> elements(elements_begin(), elements_end());
    std::mt19937 generator(std::random_device{}());
    std::shuffle(elements.begin(), elements.end(), generator);
    IntervalSet result;
    for (unsigned int i = 0; i < nb_integers; ++i)
        result.insert(elements[i]);
    return result;
}

IntervalSet::const_iterator IntervalSet::biggest_interval() const
{
    auto best = intervals_begin();
    for (auto it = intervals_begin(); it != intervals_end(); ++it)
        if (interval_size(*it) > interval_size(*best))
            best = it;
    return best;
}

int IntervalSet::first_element() const
{
    if (is_empty())
        throw std::out_of_range("IntervalSet::first_element: the set is empty");
    return set.begin()->lower();
}

unsigned int IntervalSet::size() const { return (unsigned int)boost::icl::cardinality(set); }
bool IntervalSet::is_empty() const { return set.empty(); }
bool IntervalSet::contains(int integer) const { return boost::icl::contains(set, integer); }
bool IntervalSet::contains(const ClosedInterval & interval) const { return boost::icl::contains(set, interval); }
bool IntervalSet::is_subset_of(const IntervalSet & other) const { return boost::icl::contains(other.set, set); }

std::string IntervalSet::to_string_brackets(const std::string & union_str, const std::string & opening_bracket,
                                            const std::string & closing_bracket, const std::string & sep) const
{
    std::vector<std::string> parts;
    for (auto it = intervals_begin(); it != intervals_end(); ++it)
    {
        std::string inner = std::to_string(it->lower());
        if (it->upper() != it->lower())
            inner += sep + std::to_string(it->upper());
        parts.push_back(opening_bracket + inner + closing_bracket);
    }
    if (parts.empty())
        return opening_bracket + closing_bracket;
    return join(parts, union_str);
}

std::string IntervalSet::to_string_hyphen(const std::string & sep, const std::string & joiner) const
{
    std::vector<std::string> parts;
    for (auto it = intervals_begin(); it != intervals_end(); ++it)
    {
        std::string part = std::to_string(it->lower());
        if (it->upper() != it->lower())
            part += joiner + std::to_string(it->upper());
        parts.push_back(part);
    }
    return join(parts, sep);
}

std::string IntervalSet::to_string_elements(const std::string & sep) const
{
    std::vector<std::string> parts;
    for (auto it = elements_begin(); it != elements_end(); ++it)
        parts.push_back(std::to_string(*it));
    return join(parts, sep);
}

IntervalSet & IntervalSet::operator=(const IntervalSet & other) { set = other.set; return *this; }
IntervalSet & IntervalSet::operator=(const ClosedInterval & interval) { set.clear(); set.insert(interval); return *this; }
bool IntervalSet::operator==(const IntervalSet & other) const { return set == other.set; }
bool IntervalSet::operator!=(const IntervalSet & other) const { return !(set == other.set); }
IntervalSet & IntervalSet::operator&=(const IntervalSet & other) { set &= other.set; return *this; }
IntervalSet & IntervalSet::operator-=(const IntervalSet & other) { set -= other.set; return *this; }
IntervalSet & IntervalSet::operator+=(const IntervalSet & other) { set += other.set; return *this; }
IntervalSet IntervalSet::operator-(const IntervalSet & other) const { IntervalSet r(*this); r -= other; return r; }
IntervalSet IntervalSet::operator+(const IntervalSet & other) const { IntervalSet r(*this); r += other; return r; }
IntervalSet IntervalSet::operator&(const IntervalSet & other) const { IntervalSet r(*this); r &= other; return r; }

int IntervalSet::operator[](int index) const
{
    if (index < 0 || index >= (int)size())
        throw std::out_of_range("IntervalSet::operator[]: index " + std::to_string(index) +
                                " in a set of " + std::to_string(size()));
    for (auto it = intervals_begin(); it != intervals_end(); ++it)
    {
        if (index < interval_size(*it))
            return it->lower() + index;
        index -= interval_size(*it);
    }
    throw std::logic_error("IntervalSet::operator[]: unreachable");
}

IntervalSet IntervalSet::empty_interval_set() { return IntervalSet(); }

IntervalSet IntervalSet::from_string_hyphen(const std::string & str, const std::string & sep, const std::string & joiner)
{
    IntervalSet result;
    std::vector<std::string> parts;
    boost::split(parts, str, boost::is_any_of(sep), boost::token_compress_on);
    for (const std::string & raw : parts)
    {
        std::string part = boost::algorithm::trim_copy(raw);
        if (part.empty() && parts.size() == 1)
            continue;  // the empty set
        std::vector<std::string> bounds;
        boost::split(bounds, part, boost::is_any_of(joiner), boost::token_compress_on);
        try
        {
            if (bounds.size() == 1)
            {
                result.insert(std::stoi(bounds[0]));
                continue;
            }
            if (bounds.size() == 2)
            {
                int low = std::stoi(bounds[0]), high = std::stoi(bounds[1]);
                if (low <= high)
                {
                    result.insert(ClosedInterval(low, high));
                    continue;
                }
            }
        }
        catch (const std::logic_error &)
        {
        }
        throw std::invalid_argument("IntervalSet::from_string_hyphen: cannot parse '" + part +
                                    "' (an integer such as 42 or a closed interval such as 42-44)");
    }
    return result;
}
